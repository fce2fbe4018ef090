package deps
import (
 _ "github.com/google/go-github/v62/github"
 _ "github.com/docker/docker/client"
 _ "github.com/docker/docker/pkg/stdcopy"
 _ "github.com/parquet-go/parquet-go"
 _ "github.com/sourcegraph/conc/pool"
 _ "github.com/go-git/go-git/v5"
 _ "github.com/zricethezav/gitleaks/v8/detect"
 _ "github.com/spf13/cobra"
 _ "github.com/containerd/errdefs"
 _ "golang.org/x/term"
 _ "gopkg.in/yaml.v3"
 _ "github.com/BurntSushi/toml"
)

