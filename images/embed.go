package images

import "embed"

// files holds the Dockerfiles and the files their contexts add.
//
//go:embed common/Dockerfile common/base-setup.sh python/Dockerfile javascript/Dockerfile java/Dockerfile java/maven-settings-local.xml cpp/Dockerfile
var files embed.FS
