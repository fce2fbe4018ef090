package images

import "embed"

// files holds the Dockerfiles and the files their contexts add.
//
//go:embed python/Dockerfile javascript/Dockerfile java/Dockerfile java/maven-settings-local.xml cpp/Dockerfile common/base-setup.sh
var files embed.FS
