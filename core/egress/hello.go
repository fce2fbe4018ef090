package egress

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxHelloBytes bounds what the door reads of a tunnel's first bytes while looking for
// the TLS ClientHello (its records' headers included). A ClientHello is a few hundred
// bytes, under 2 KiB with post-quantum key shares; 64 KiB leaves room for any real client.
const MaxHelloBytes = 64 << 10

// ErrNotTLS means the first bytes of a tunnel are not a TLS handshake record.
var ErrNotTLS = errors.New("not a TLS ClientHello")

// readClientHello reads TLS records from r until it holds a whole ClientHello handshake
// message (which may be fragmented across records), at most MaxHelloBytes in all, and
// returns the bytes read (to be sent on unchanged) and the server_name (SNI) of the
// hello, "" when it has none. It never reads past the record that completes the hello.
func readClientHello(r io.Reader) (raw []byte, sni string, err error) {
	var msg []byte // the handshake message's bytes, gathered from the records
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return raw, "", fmt.Errorf("%w: reading a record header: %w", ErrNotTLS, shortRead(err))
		}
		raw = append(raw, hdr[:]...)
		if hdr[0] != 0x16 {
			return raw, "", fmt.Errorf("%w: the first record is of type %d, not a handshake (22)", ErrNotTLS, hdr[0])
		}
		if hdr[1] != 3 || hdr[2] > 4 {
			return raw, "", fmt.Errorf("%w: record version %d.%d", ErrNotTLS, hdr[1], hdr[2])
		}
		n := int(hdr[3])<<8 | int(hdr[4])
		if n == 0 || n > 1<<14 {
			return raw, "", fmt.Errorf("%w: a handshake record of %d bytes (1 to 16384 allowed)", ErrNotTLS, n)
		}
		if len(raw)+n > MaxHelloBytes {
			return raw, "", fmt.Errorf("%w: the ClientHello's records exceed %d bytes", ErrNotTLS, MaxHelloBytes)
		}
		start := len(raw)
		raw = append(raw, make([]byte, n)...)
		if _, err := io.ReadFull(r, raw[start:]); err != nil {
			return raw[:start], "", fmt.Errorf("%w: reading a record of %d bytes: %w", ErrNotTLS, n, shortRead(err))
		}
		msg = append(msg, raw[start:]...)
		if len(msg) < 4 {
			continue
		}
		if msg[0] != 1 {
			return raw, "", fmt.Errorf("%w: the first handshake message is of type %d, not a ClientHello (1)", ErrNotTLS, msg[0])
		}
		mlen := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
		if 4+mlen > MaxHelloBytes {
			return raw, "", fmt.Errorf("%w: a ClientHello of %d bytes (at most %d)", ErrNotTLS, mlen, MaxHelloBytes)
		}
		if len(msg) < 4+mlen {
			continue
		}
		sni, err := helloServerName(msg[4 : 4+mlen])
		return raw, sni, err
	}
}

func shortRead(err error) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return errors.New("the client stopped sending")
	}
	return err
}

// helloServerName returns the host_name of a ClientHello body's server_name extension
// ("" when there is none). A malformed hello, a server_name with no or several host
// names, or a name that is not a plain DNS name is an error.
func helloServerName(b []byte) (string, error) {
	bad := func(what string) error { return fmt.Errorf("%w: malformed ClientHello (%s)", ErrNotTLS, what) }
	p := parser(b)
	if !p.skip(2 + 32) { // legacy_version, random
		return "", bad("version and random")
	}
	if !p.skipVec(1, 32) {
		return "", bad("session id")
	}
	if !p.skipVec(2, 1<<16) {
		return "", bad("cipher suites")
	}
	if !p.skipVec(1, 255) {
		return "", bad("compression methods")
	}
	if len(p) == 0 {
		return "", nil // no extensions
	}
	exts, ok := p.vec(2)
	if !ok || len(p) != 0 {
		return "", bad("extensions")
	}
	sni, found := "", false
	for len(exts) > 0 {
		var typ uint16
		var body parser
		if typ, ok = exts.u16(); !ok {
			return "", bad("extension type")
		}
		if body, ok = exts.vec(2); !ok {
			return "", bad("extension length")
		}
		if typ != 0 {
			continue
		}
		if found {
			return "", bad("two server_name extensions")
		}
		found = true
		list, ok := body.vec(2)
		if !ok || len(body) != 0 {
			return "", bad("server_name list")
		}
		for len(list) > 0 {
			kind, ok := list.u8()
			if !ok {
				return "", bad("server_name entry")
			}
			name, ok := list.vec(2)
			if !ok {
				return "", bad("server_name entry")
			}
			if kind != 0 {
				continue
			}
			if sni != "" {
				return "", bad("two host names")
			}
			if !dnsName(string(name)) {
				return "", bad(fmt.Sprintf("host name %q", trunc(string(name))))
			}
			sni = strings.ToLower(string(name))
		}
		if sni == "" {
			return "", bad("server_name without a host name")
		}
	}
	return sni, nil
}

// dnsName reports whether s is a DNS name as SNI carries it: letters, digits, '-', '_'
// and dots, 1 to 253 bytes.
func dnsName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// parser reads TLS's big-endian integers and length-prefixed vectors.
type parser []byte

func (p *parser) skip(n int) bool {
	if len(*p) < n {
		return false
	}
	*p = (*p)[n:]
	return true
}

func (p *parser) u8() (byte, bool) {
	if len(*p) < 1 {
		return 0, false
	}
	v := (*p)[0]
	*p = (*p)[1:]
	return v, true
}

func (p *parser) u16() (uint16, bool) {
	if len(*p) < 2 {
		return 0, false
	}
	v := uint16((*p)[0])<<8 | uint16((*p)[1])
	*p = (*p)[2:]
	return v, true
}

// vec reads a vector whose length is a lenBytes (1 or 2) big-endian prefix.
func (p *parser) vec(lenBytes int) (parser, bool) {
	var n int
	switch lenBytes {
	case 1:
		v, ok := p.u8()
		if !ok {
			return nil, false
		}
		n = int(v)
	default:
		v, ok := p.u16()
		if !ok {
			return nil, false
		}
		n = int(v)
	}
	if len(*p) < n {
		return nil, false
	}
	v := (*p)[:n]
	*p = (*p)[n:]
	return v, true
}

func (p *parser) skipVec(lenBytes, max int) bool {
	v, ok := p.vec(lenBytes)
	return ok && len(v) <= max
}
