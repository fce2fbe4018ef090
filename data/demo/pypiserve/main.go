// Command pypiserve serves the demo's fixture package index (data/demo/pypi, embedded) as
// a PEP 691 JSON simple index at http://ADDR/simple/ until interrupted. With --dir it
// serves a folder of the same layout instead. It prints the index URL on its first line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/envgap/envgap/data/demo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	dir := flag.String("dir", "", "serve this folder (holding simple/) instead of the embedded index")
	flag.Parse()
	var fsys fs.FS = demo.PyPIFS()
	if *dir != "" {
		fsys = os.DirFS(*dir)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pypiserve:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/simple/\n", ln.Addr())
	srv := &http.Server{Handler: demo.PyPIHandler(fsys), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "pypiserve:", err)
		os.Exit(1)
	}
}
