package verify

import "os"

func fileMode(m int) os.FileMode { return os.FileMode(m) }
