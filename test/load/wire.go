package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// conn is one player's keep-alive HTTP/1.1 connection. The load generator
// shares the machine with the server and Postgres, so it speaks HTTP itself
// instead of through net/http's client (no transport goroutines, cookie jar
// or per-request header maps): about a third of the CPU per request, which
// the server gets instead. It handles what this server sends: a status line,
// headers (Content-Length, chunked Transfer-Encoding, Connection: close,
// Set-Cookie) and a body.
type conn struct {
	host    string // host:port
	c       net.Conn
	r       *bufio.Reader
	wbuf    []byte
	body    []byte
	lastUse time.Time
	cookies map[string]string
	cookie  string // the Cookie header's value
}

// idleRedial is how long a connection may sit unused before it is replaced
// rather than risked (the server closes idle connections eventually).
const idleRedial = 5 * time.Second

// requestTimeout bounds a request without a deadline of its own.
const requestTimeout = 30 * time.Second

func newConn(base string) (*conn, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%s: only http:// URLs", base)
	}
	host := u.Host
	if u.Port() == "" {
		host += ":80"
	}
	return &conn{host: host, cookies: map[string]string{}}, nil
}

func (c *conn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c, c.r = nil, nil
	}
}

// roundTrip sends one request and returns the status and the body (valid
// until the next call).
func (c *conn) roundTrip(ctx context.Context, method, path string, body []byte, csrf, token string) (int, []byte, error) {
	if c.c != nil && time.Since(c.lastUse) > idleRedial {
		c.close()
	}
	if c.c == nil {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", c.host)
		if err != nil {
			return 0, nil, err
		}
		c.c, c.r = nc, bufio.NewReaderSize(nc, 16<<10)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(requestTimeout)
	}
	_ = c.c.SetDeadline(deadline)
	w := append(c.wbuf[:0], method...)
	w = append(w, ' ')
	w = append(w, path...)
	w = append(w, " HTTP/1.1\r\nHost: "...)
	w = append(w, c.host...)
	w = append(w, "\r\nUser-Agent: fairplay-load\r\n"...)
	if body != nil {
		w = append(w, "Content-Type: application/json\r\nContent-Length: "...)
		w = strconv.AppendInt(w, int64(len(body)), 10)
		w = append(w, "\r\n"...)
	}
	if csrf != "" {
		w = append(w, "X-CSRF-Token: "...)
		w = append(w, csrf...)
		w = append(w, "\r\n"...)
	}
	if token != "" {
		w = append(w, "Authorization: Bearer "...)
		w = append(w, token...)
		w = append(w, "\r\n"...)
	}
	if c.cookie != "" {
		w = append(w, "Cookie: "...)
		w = append(w, c.cookie...)
		w = append(w, "\r\n"...)
	}
	w = append(w, "\r\n"...)
	w = append(w, body...)
	c.wbuf = w
	if _, err := c.c.Write(w); err != nil {
		c.close()
		return 0, nil, err
	}
	status, keep, err := c.readResponse()
	if err != nil {
		c.close()
		return 0, nil, err
	}
	c.lastUse = time.Now()
	if !keep {
		c.close()
	}
	return status, c.body, nil
}

// readResponse reads one response into c.body; keep is whether the
// connection stays open.
func (c *conn) readResponse() (status int, keep bool, err error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	keep = line[7] == '1'
	length, chunked := -1, false
	cookiesChanged := false
	for {
		line, err = c.r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return 0, false, fmt.Errorf("bad header %q", line)
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keep = false
			}
		case bytes.EqualFold(name, []byte("Set-Cookie")):
			pair, _, _ := strings.Cut(string(value), ";")
			if k, v, ok := strings.Cut(pair, "="); ok {
				c.cookies[strings.TrimSpace(k)] = strings.TrimSpace(v)
				cookiesChanged = true
			}
		}
	}
	if cookiesChanged {
		var b strings.Builder
		for k, v := range c.cookies {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(k + "=" + v)
		}
		c.cookie = b.String()
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			line, err = c.r.ReadSlice('\n')
			if err != nil {
				return 0, false, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(line, []byte(";"), 2)[0])), 16, 32)
			if err != nil || size < 0 {
				return 0, false, fmt.Errorf("bad chunk size %q", line)
			}
			if size == 0 {
				// Trailers (none expected) end with an empty line.
				for {
					line, err = c.r.ReadSlice('\n')
					if err != nil {
						return 0, false, err
					}
					if len(bytes.TrimRight(line, "\r\n")) == 0 {
						return status, keep, nil
					}
				}
			}
			if c.body, err = readN(c.r, c.body, int(size)); err != nil {
				return 0, false, err
			}
			if _, err := c.r.Discard(2); err != nil {
				return 0, false, err
			}
		}
	case length >= 0:
		if c.body, err = readN(c.r, c.body, length); err != nil {
			return 0, false, err
		}
	case status == 204 || status == 304:
	default:
		// No length: the body runs to the end of the connection.
		rest, err := io.ReadAll(c.r)
		if err != nil {
			return 0, false, err
		}
		c.body = append(c.body, rest...)
		keep = false
	}
	return status, keep, nil
}

// readN appends exactly n bytes from r to buf.
func readN(r io.Reader, buf []byte, n int) ([]byte, error) {
	start := len(buf)
	if cap(buf)-start < n {
		grown := make([]byte, start, start+n)
		copy(grown, buf)
		buf = grown
	}
	buf = buf[:start+n]
	if _, err := io.ReadFull(r, buf[start:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return buf[:start], err
	}
	return buf, nil
}
