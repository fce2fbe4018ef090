package deps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/shell"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

func names(ds schemas.DepSet) string {
	var n []string
	for _, d := range ds.Deps {
		n = append(n, d.Name)
	}
	return strings.Join(n, ",")
}

// The logs under testdata/trace were recorded with TraceCommand's flags on a Debian
// machine: python3 importing yaml and jwt from dist-packages, node requiring left-pad
// and @scope/util (which has its own nested left-pad), a C program linked with -lz and
// -lm (cpp.strace.log without status=successful, so it has ENOENT lines), and java on
// a classpath of target/dependency/* and a jar in a Maven repository.
func TestTraceDepsRealLogs(t *testing.T) {
	tests := []struct {
		log  string
		eco  schemas.Ecosystem
		opts TraceOptions
		want string
	}{
		{"python", schemas.EcosystemPython, TraceOptions{Workdir: "/tmp/tr"}, "cryptography,jwt,yaml"},
		{"python", schemas.EcosystemPython, TraceOptions{Workdir: "/tmp/tr", PyModules: map[string]string{"yaml": "PyYAML", "jwt": "PyJWT", "_yaml": "PyYAML"}}, "cryptography,pyjwt,pyyaml"},
		{"python", schemas.EcosystemPython, TraceOptions{Workdir: "/tmp/tr", Exclude: []string{"Cryptography"}}, "jwt,yaml"},
		{"node", schemas.EcosystemJavaScript, TraceOptions{Workdir: "/tmp/tr/js"}, "@scope/util,left-pad"},
		{"cpp", schemas.EcosystemCPP, TraceOptions{Workdir: "/tmp/tr/c"}, "z"},
		{"java", schemas.EcosystemJava, TraceOptions{Workdir: "/tmp/tr/java"}, "mini-lib,org.example:extra,unused-lib"},
		{"java", schemas.EcosystemJava, TraceOptions{Workdir: "/tmp/tr/java", Known: []schemas.Dependency{{Name: "org.example:mini-lib", Spec: "1.2.3"}}}, "org.example:extra,org.example:mini-lib,unused-lib"},
		// Another ecosystem's rules find nothing in a log.
		{"node", schemas.EcosystemPython, TraceOptions{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.log+"/"+string(tt.eco), func(t *testing.T) {
			ds, err := TraceDeps(tt.eco, readTestdata(t, filepath.Join("trace", tt.log+".strace.log")), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(ds); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			for _, d := range ds.Deps {
				if !strings.HasPrefix(d.From, "/") {
					t.Errorf("%s: From %q is not the traced file", d.Name, d.From)
				}
			}
		})
	}
}

func TestTraceDepsRules(t *testing.T) {
	tests := []struct {
		name string
		eco  schemas.Ecosystem
		log  string
		opts TraceOptions
		want string
	}{
		{"failed opens are skipped", schemas.EcosystemPython, `1 openat(AT_FDCWD, "/usr/lib/python3/dist-packages/numpy/__init__.py", O_RDONLY) = -1 ENOENT (No such file or directory)
1 openat(AT_FDCWD, "/usr/local/lib/python3.10/dist-packages/six.py", O_RDONLY|O_CLOEXEC) = 3`, TraceOptions{}, "six"},
		{"python file forms", schemas.EcosystemPython, `open("/v/lib/python3.10/site-packages/__pycache__/typing_extensions.cpython-310.pyc", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages/_cffi_backend.cpython-310-x86_64-linux-gnu.so", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages/old-1.0-py3.10.egg/old/__init__.py", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages/easy-install.pth", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages/_distutils_hack/__init__.py", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages/PyYAML-6.0.dist-info/METADATA", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages/README.txt", O_RDONLY) = 3
open("/v/lib/python3.10/site-packages", O_RDONLY|O_DIRECTORY) = 3`, TraceOptions{}, "cffi-backend,old,typing-extensions"},
		{"python metadata counted on request", schemas.EcosystemPython, `open("/v/site-packages/PyYAML-6.0.dist-info/METADATA", O_RDONLY) = 3
open("/v/site-packages/Flask.egg-info/PKG-INFO", O_RDONLY) = 3`, TraceOptions{IncludeMetadata: true}, "flask,pyyaml"},
		{"pip's own process is not the program", schemas.EcosystemPython, `10 execve("/usr/bin/python3", ["python3", "-m", "pip", "list"], 0x0 /* 3 vars */) = 0
10 openat(AT_FDCWD, "/usr/lib/python3/dist-packages/pip/__init__.py", O_RDONLY) = 3
10 clone(child_stack=NULL, flags=SIGCHLD) = 11
11 openat(AT_FDCWD, "/usr/lib/python3/dist-packages/rich/__init__.py", O_RDONLY) = 3
11 execve("/usr/bin/python3", ["python3", "app.py"], 0x0 /* 3 vars */) = 0
11 openat(AT_FDCWD, "/usr/local/lib/python3.10/dist-packages/requests/__init__.py", O_RDONLY) = 3`, TraceOptions{}, "requests"},
		{"unfinished and resumed", schemas.EcosystemJavaScript, `[pid 20] openat(AT_FDCWD, "/work/node_modules/a/index.js", O_RDONLY <unfinished ...>
[pid 21] openat(AT_FDCWD, "/work/node_modules/b/index.js", O_RDONLY <unfinished ...>
[pid 20] <... openat resumed>) = 17
[pid 21] <... openat resumed>) = -1 EACCES (Permission denied)
[pid 20] --- SIGCHLD {si_signo=SIGCHLD} ---
[pid 20] +++ exited with 0 +++`, TraceOptions{}, "a"},
		{"node paths", schemas.EcosystemJavaScript, `5 execve("/usr/bin/node", ["node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "start"], 0x0 /* 1 var */) = 0
5 openat(AT_FDCWD, "/usr/lib/node_modules/npm/node_modules/semver/index.js", O_RDONLY) = 3
5 openat(AT_FDCWD, "/work/node_modules/from-npm-process/index.js", O_RDONLY) = 3
5 vfork() = 6
6 execve("/bin/sh", ["sh", "-c", "node index.js"], 0x0 /* 1 var */) = 0
6 execve("/usr/bin/node", ["node", "index.js"], 0x0 /* 1 var */) = 0
6 openat(AT_FDCWD, "/usr/lib/node_modules/npm/lib/x.js", O_RDONLY) = 3
6 openat(AT_FDCWD, "/usr/lib/node_modules/typescript/lib/tsc.js", O_RDONLY) = 3
6 openat(AT_FDCWD, "node_modules/.bin/thing", O_RDONLY) = 3
6 openat(AT_FDCWD, "node_modules/.pnpm/x@1.0.0/node_modules/x/index.js", O_RDONLY) = 3
6 openat(AT_FDCWD, "/work/node_modules/@types/node/index.d.ts", O_RDONLY) = 3
6 openat(AT_FDCWD, "/work/node_modules/@scope", O_RDONLY|O_DIRECTORY) = 3
6 openat(AT_FDCWD, "/work/node_modules/.package-lock.json", O_RDONLY) = 3`, TraceOptions{}, "@types/node,typescript,x"},
		{"cpp programs only", schemas.EcosystemCPP, `1 execve("/usr/bin/bash", ["bash", "-c", "cmake --build build && ./build/app"], 0x0 /* 1 var */) = 0
1 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libtinfo.so.6", O_RDONLY|O_CLOEXEC) = 3
1 clone(child_stack=NULL, flags=SIGCHLD) = 2
2 execve("/usr/bin/cmake", ["cmake", "--build", "build"], 0x0 /* 1 var */) = 0
2 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libcurl.so.4", O_RDONLY|O_CLOEXEC) = 3
1 clone(child_stack=NULL, flags=SIGCHLD) = 3
3 chdir("build") = 0
3 execve("./app", ["./app"], 0x0 /* 1 var */) = 0
3 openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/work/build/libproject_own.so", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libssl.so.3", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libcrypto.so.3", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libstdc++.so.6", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libgcc_s.so.1", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libpthread.so.0", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libdl.so.2", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/librt.so.1", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib64/ld-linux-x86-64.so.2", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libnss_files.so.2", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/usr/lib/x86_64-linux-gnu/gconv/UTF-16.so", O_RDONLY|O_CLOEXEC) = 3
3 openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libboost_system.so.1.74.0", O_RDONLY|O_CLOEXEC) = 3
3 openat(3, "libignored.so", O_RDONLY) = 4`, TraceOptions{}, "boost_system,crypto,ssl"},
		{"maven's own jars", schemas.EcosystemJava, `1 execve("/usr/lib/jvm/java-17-openjdk-amd64/bin/java", ["/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "-classpath", "/usr/share/maven/boot/plexus-classworlds-2.6.0.jar", "-Dmaven.home=/usr/share/maven"], 0x0 /* 1 var */) = 0
1 openat(AT_FDCWD, "/root/.m2/repository/org/apache/maven/plugins/maven-dependency-plugin/3.6.0/maven-dependency-plugin-3.6.0.jar", O_RDONLY) = 3
1 clone(child_stack=NULL, flags=SIGCHLD) = 2
2 execve("/usr/bin/java", ["java", "-cp", "target/classes:target/dependency/*", "demo.App"], 0x0 /* 1 var */) = 0
2 openat(AT_FDCWD, "target/dependency/log4j-1.2-api-2.20.0.jar", O_RDONLY) = 3
2 openat(AT_FDCWD, "target/dependency/guava-32.1.2-jre.jar", O_RDONLY) = 3
2 openat(AT_FDCWD, "/root/.m2/repository/com/google/code/gson/gson/2.10.1/gson-2.10.1.jar", O_RDONLY) = 3
2 openat(AT_FDCWD, "/usr/lib/jvm/java-17-openjdk-amd64/lib/jrt-fs.jar", O_RDONLY) = 3`, TraceOptions{Known: []schemas.Dependency{{Name: "org.apache.logging.log4j:log4j-1.2-api", Spec: "2.20.0"}}}, "com.google.code.gson:gson,guava,org.apache.logging.log4j:log4j-1.2-api"},
		{"escaped path", schemas.EcosystemJavaScript, `openat(AT_FDCWD, "/work/node_modules/caf\303\251/i\"x.js", O_RDONLY) = 3`, TraceOptions{}, "café"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := TraceDeps(tt.eco, []byte(tt.log), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(ds); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTraceDepsEmpty(t *testing.T) {
	ds, err := TraceDeps(schemas.EcosystemPython, []byte("strace: exec: No such file or directory\n"), TraceOptions{})
	if err != nil || ds.Unreadable == "" {
		t.Errorf("got %+v, %v; want an unreadable set", ds, err)
	}
	if _, err := TraceDeps("go", []byte("x"), TraceOptions{}); err == nil {
		t.Error("unknown ecosystem: no error")
	}
}

func TestParsePyModuleMap(t *testing.T) {
	m, err := ParsePyModuleMap([]byte(`{"_yaml": "PyYAML", "dateutil": "python-dateutil"}`))
	if err != nil || m["dateutil"] != "python-dateutil" {
		t.Fatalf("got %v, %v", m, err)
	}
	if _, err := ParsePyModuleMap([]byte("Traceback")); err == nil {
		t.Error("garbage: no error")
	}
}

// TestTraceCommandLive runs TraceCommand's strace invocation on this machine (the log
// path moved to a temporary directory) and reads the log back: the flags must be ones
// the installed strace accepts, the exit code must be the run's, and the loaded files
// must come out as dependencies.
func TestTraceCommandLive(t *testing.T) {
	testenv.Tool(t, "strace")
	dir := t.TempDir()
	mod := filepath.Join(dir, "node_modules", "dep")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "index.js"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "trace.log")
	cmd := strings.ReplaceAll(TraceCommand("cat node_modules/dep/index.js >/dev/null && cat node_modules/missing/x.js 2>/dev/null; exit 3"), TracePath, logPath)
	cmd = strings.ReplaceAll(cmd, "mkdir -p "+EvidenceDir, "true")
	c := exec.Command("bash", "-c", cmd)
	c.Dir = dir
	out, err := c.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		if strings.Contains(string(out), "ptrace") || strings.Contains(string(out), "Operation not permitted") {
			testenv.Missing(t, "ptrace not permitted here: %s", out)
		}
		t.Fatalf("exit %v, want 3; output %s", err, out)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "ENOENT") {
		t.Errorf("status=successful did not drop failed calls:\n%s", log)
	}
	ds, err := TraceDeps(schemas.EcosystemJavaScript, log, TraceOptions{Workdir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// cat is a system program, but the JavaScript rules count any process's opens.
	if got := names(ds); got != "dep" {
		t.Errorf("got %q, want dep; log:\n%s", got, log)
	}
}

func TestShellQuote(t *testing.T) {
	run := `python3 -c "print('it''s')" && echo $HOME`
	out, err := exec.Command("bash", "-c", "printf %s "+shell.Quote(run)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != run {
		t.Errorf("round trip %q, want %q", out, run)
	}
}

func BenchmarkTraceDeps(b *testing.B) {
	log := readTestdata(b, filepath.Join("trace", "python.strace.log"))
	big := []byte(strings.Repeat(string(log), 50))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := TraceDeps(schemas.EcosystemPython, big, TraceOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
