package registry

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func fetchAll(b *testing.B, url, accept string) int {
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s: %d", url, resp.StatusCode)
	}
	return int(n)
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	pct := func(p float64) float64 { return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkMetadataLatency measures one metadata answer: cold (empty caches, upstream
// fetch, index and filter) and warm (cached document, filter only).
func BenchmarkMetadataLatency(b *testing.B) {
	up := newUpstream(b)
	cases := []struct{ name, path, accept string }{
		{"pypi", "/pypi/simple/demo/", pipAccept},
		{"npm", "/npm/demo-pkg", npmAccept},
	}
	for _, c := range cases {
		b.Run(c.name+"/cold", func(b *testing.B) {
			var d []time.Duration
			for b.Loop() {
				b.StopTimer()
				_, srv := newTestProxy(b, up, nil)
				b.StartTimer()
				t0 := time.Now()
				fetchAll(b, srv.URL+"/c/"+testCutoff+c.path, c.accept)
				d = append(d, time.Since(t0))
				b.StopTimer()
				srv.Close()
				b.StartTimer()
			}
			reportPercentiles(b, d)
		})
		b.Run(c.name+"/warm", func(b *testing.B) {
			_, srv := newTestProxy(b, up, nil)
			fetchAll(b, srv.URL+"/c/"+testCutoff+c.path, c.accept)
			var d []time.Duration
			for b.Loop() {
				t0 := time.Now()
				fetchAll(b, srv.URL+"/c/"+testCutoff+c.path, c.accept)
				d = append(d, time.Since(t0))
			}
			reportPercentiles(b, d)
		})
	}
}

// BenchmarkArtifactThroughput compares serving an 8 MiB wheel from the cache with fetching
// it through the proxy cold and with fetching it from the upstream directly.
func BenchmarkArtifactThroughput(b *testing.B) {
	up := newUpstream(b)
	const name = "big-1.0-py3-none-any.whl"
	data := make([]byte, 8<<20)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(data)
	up.mu.Lock()
	up.files["/files/"+name] = data
	up.extra["/simple/big/"] = []byte(fmt.Sprintf(`{"meta":{"api-version":"1.1"},"name":"big","versions":["1.0"],"files":[{"filename":%q,"url":%q,"hashes":{"sha256":%q},"upload-time":"2020-01-01T00:00:00.000000Z"}]}`,
		name, up.srv.URL+"/files/"+name, sha256hex(data)))
	up.mu.Unlock()
	dirCache := func(o *Options) {
		bc := newStoreCache(b, b.TempDir())
		o.Blobs = bc
	}
	b.Run("upstream-direct", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			fetchAll(b, up.srv.URL+"/files/"+name, "")
		}
	})
	b.Run("proxy-cold", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			b.StopTimer()
			_, srv := newTestProxy(b, up, dirCache)
			fetchAll(b, srv.URL+"/c/"+testCutoff+"/pypi/simple/big/", "")
			b.StartTimer()
			fetchAll(b, srv.URL+"/c/"+testCutoff+"/pypi/files/big/"+name, "")
			b.StopTimer()
			srv.Close()
			b.StartTimer()
		}
	})
	for _, c := range []struct {
		name string
		mod  func(*Options)
	}{{"proxy-cached-dir", dirCache}, {"proxy-cached-mem", nil}} {
		b.Run(c.name, func(b *testing.B) {
			_, srv := newTestProxy(b, up, c.mod)
			u := srv.URL + "/c/" + testCutoff + "/pypi/files/big/" + name
			fetchAll(b, u, "")
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				fetchAll(b, u, "")
			}
		})
	}
}

// hugePackument generates a packument of at least size bytes: many versions, each with a
// long description, as real packages with long histories have.
func hugePackument(name string, size int) []byte {
	var buf bytes.Buffer
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 250) // ~6.7 KB per version
	buf.WriteString(`{"_id":"` + name + `","name":"` + name + `","dist-tags":{"latest":"VERSION_LATEST"},"versions":{`)
	var times strings.Builder
	t0 := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for buf.Len() < size {
		v := fmt.Sprintf("%d.%d.0", n/100, n%100)
		if n > 0 {
			buf.WriteByte(',')
			times.WriteByte(',')
		}
		fmt.Fprintf(&buf, `"%s":{"name":"%s","version":"%s","description":"%s","dependencies":{"a":"^1.0.0","b":"~2.3.4"},"scripts":{"test":"x"},"dist":{"tarball":"http://upstream.invalid/%s/-/%s-%s.tgz","integrity":"sha512-x","shasum":"00"}}`,
			v, name, v, filler, name, name, v)
		fmt.Fprintf(&times, `"%s":"%s"`, v, t0.Add(time.Duration(n)*24*time.Hour).Format(time.RFC3339))
		n++
	}
	last := fmt.Sprintf("%d.%d.0", (n-1)/100, (n-1)%100)
	buf.WriteString(`},"time":{"created":"2014-12-31T00:00:00Z",` + times.String() + `},"readme":"big"}`)
	return bytes.Replace(buf.Bytes(), []byte("VERSION_LATEST"), []byte(last), 1)
}

// BenchmarkHugePackument serves a 20 MB packument (cached on disk) at a cut-off that keeps
// part of its versions. It reports the peak heap above the baseline while serving: live
// objects as marked by the GC cycles that ran during the request (peak-live-MiB) and all
// heap objects including garbage not yet swept (peak-heap-MiB).
func BenchmarkHugePackument(b *testing.B) {
	up := newUpstream(b)
	doc := hugePackument("huge-pkg", 20<<20)
	up.mu.Lock()
	up.extra["/npm/huge-pkg"] = doc
	up.mu.Unlock()
	docMiB := float64(len(doc)) / (1 << 20)
	bc := newStoreCache(b, b.TempDir())
	_, srv := newTestProxy(b, up, func(o *Options) { o.Blobs = bc })
	cut := "2021-01-01"
	for _, c := range []struct{ name, accept string }{{"full", "application/json"}, {"abbreviated", npmAccept}} {
		b.Run(c.name, func(b *testing.B) {
			fetchAll(b, srv.URL+"/c/"+cut+"/npm/huge-pkg", c.accept) // warm the cache
			names := []string{"/memory/classes/heap/objects:bytes", "/gc/heap/live:bytes"}
			var worst [2]uint64
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				runtime.GC()
				s := []metrics.Sample{{Name: names[0]}, {Name: names[1]}}
				metrics.Read(s)
				base := [2]uint64{s[0].Value.Uint64(), s[1].Value.Uint64()}
				var peak [2]atomic.Uint64
				peak[0].Store(base[0])
				peak[1].Store(base[1])
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					s := []metrics.Sample{{Name: names[0]}, {Name: names[1]}}
					tk := time.NewTicker(200 * time.Microsecond)
					defer tk.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tk.C:
							metrics.Read(s)
							for i := range s {
								if v := s[i].Value.Uint64(); v > peak[i].Load() {
									peak[i].Store(v)
								}
							}
						}
					}
				}()
				b.StartTimer()
				fetchAll(b, srv.URL+"/c/"+cut+"/npm/huge-pkg", c.accept)
				b.StopTimer()
				close(stop)
				<-done
				for i := range worst {
					worst[i] = max(worst[i], peak[i].Load()-base[i])
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(worst[0])/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(worst[1])/(1<<20), "peak-live-MiB")
			b.ReportMetric(docMiB, "doc-MiB")
		})
	}
}

// BenchmarkOpenSessions measures what a run's registry session costs: opening one,
// binding it to its container's address and closing it, with 1000 other sessions open
// (open-bind-close); and a warm metadata request under a bound session against the same
// request of the stand-alone proxy (session-request, standalone-request: their ratio is
// the cost of the session check per request).
func BenchmarkOpenSessions(b *testing.B) {
	up := newUpstream(b)
	p, srv := newTestProxy(b, up, nil)
	cut := mustCutoff(b, testCutoff)
	var open []*Session
	for i := range 1000 {
		s := p.NewSession(cut)
		if err := s.Bind(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})); err != nil {
			b.Fatal(err)
		}
		open = append(open, s)
	}
	defer func() {
		for _, s := range open {
			s.Close()
		}
	}()
	b.Run("open-bind-close", func(b *testing.B) {
		a := netip.MustParseAddr("10.2.0.1")
		for b.Loop() {
			s := p.NewSession(cut)
			if err := s.Bind(a); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	s := localSession(b, p, cut)
	defer s.Close()
	fetchAll(b, s.BaseURL(srv.URL)+"/npm/demo-pkg", npmAccept)
	b.Run("session-request", func(b *testing.B) {
		for b.Loop() {
			fetchAll(b, s.BaseURL(srv.URL)+"/npm/demo-pkg", npmAccept)
		}
	})
	b.Run("standalone-request", func(b *testing.B) {
		for b.Loop() {
			fetchAll(b, srv.URL+"/c/"+testCutoff+"/npm/demo-pkg", npmAccept)
		}
	})
}
