package envfiles_test

import (
	"testing"

	"github.com/envgap/envgap/lib/envfiles"
)

// BenchmarkClassifyPath classifies a mix of real path shapes.
func BenchmarkClassifyPath(b *testing.B) {
	paths := []string{"setup.py", "src/pkg/core/module.py", "packages/ui/package.json", "src/main/java/com/acme/App.java",
		"src/test/java/com/acme/AppTest.java", "third_party/zlib/CMakeLists.txt", "docs/requirements.txt", "gradle/wrapper/gradle-wrapper.properties",
		"node_modules/left-pad/index.js", "README.md", ".github/workflows/ci.yml", "include/foo/bar.hpp"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		envfiles.ClassifyPath(paths[i%len(paths)])
	}
}
