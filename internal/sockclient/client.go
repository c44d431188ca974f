// Package sockclient is the commands' side of slurmd-lite's local API
// (internal/localapi): HTTP/1.1 and JSON over the daemon's Unix socket,
// written on the system calls alone.
//
// Why not net/http: a command is a process that lives for a millisecond,
// and most of that millisecond is start-up. Linking net (and with it cgo's
// resolver, the dynamic loader and libc) made every sbatch and squeue
// start a millisecond later; this package links neither net nor os/user,
// so a command built on it is a static binary that starts as fast as Go
// allows. The protocol is the small part of HTTP/1.1 the daemon speaks:
// one request per connection (Connection: close), a JSON body with its
// Content-Length, and an answer with a Content-Length or chunked.
//
//	c := sockclient.New(cfg.SocketPath)
//	err := c.Do(ctx, "POST", api.PathJobs, sub, &resp) // *api.Error, *UnreachableError
package sockclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/clock"
)

// Client talks to the daemon at one socket. It holds no connection between
// requests, so it needs no closing and is safe for concurrent use.
type Client struct {
	socket string
	// answer is MessageTimeout (answer.go); 0: the context alone bounds a
	// request.
	answer time.Duration
	// peer, when set, learns the daemon's pid once connected (Ping).
	peer func(pid int)
	// advice gives the end of the error of a daemon that is not running
	// (SetAdvice).
	advice func() string
}

// SetAdvice gives what writes the lines that end the error when no daemon
// runs at the socket: where the socket came from and what a user and an
// administrator can do (config.NoDaemonAdvice). It is called only for that
// error, so that a command that reaches its daemon does not write them.
// Without it the error says only how to start a daemon.
func (c *Client) SetAdvice(advice func() string) { c.advice = advice }

// New returns a client for the daemon at socket; the first request says
// whether one answers there.
func New(socket string) *Client { return &Client{socket: socket} }

// Socket is the socket the client talks to.
func (c *Client) Socket() string { return c.socket }

// maxSocketPath is sun_path's size less its NUL.
const maxSocketPath = 107

// Do sends method path with in as its JSON body (none when in is nil) and
// decodes the answer into out (ignored when out is nil). A refusal by the
// daemon is an *api.Error with its status and Slurm code; a daemon that cannot
// be reached is an *UnreachableError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, method, path, in, out, "", nil)
}

// GobType is the media type of an answer in encoding/gob (see
// internal/sockclient/gobanswer), which the daemon gives a client that
// accepts it.
const GobType = "application/x-gob"

// Decoder reads a successful answer's body, given its Content-Type.
type Decoder func(contentType string, body io.Reader) error

// DoAccept is Do with the answer asked for in the media type accept and
// read by decode: for answers of thousands of records, which JSON is slow
// to decode (squeue asks for encoding/gob). The encoder stays with the
// caller, so that commands that never ask for it do not link it (gob's
// package initialisation alone costs a command half a millisecond).
func (c *Client) DoAccept(ctx context.Context, method, path string, in any, accept string, decode Decoder) error {
	return c.do(ctx, method, path, in, nil, accept, decode)
}

// JSONAppender is a request body that writes its own JSON, as
// encoding/json would, without the reflection (api.Submit: sbatch's).
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// AnswerDecoder is an answer that reads its common shape itself, without
// encoding/json's reflection (api.Submitted: sbatch's); DecodeAnswer
// returns false for any other, which encoding/json then reads.
type AnswerDecoder interface {
	DecodeAnswer(body []byte) bool
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, accept string, decode Decoder) error {
	// A context already done sends nothing: the abort set from it below
	// comes from another goroutine, and a quick daemon could answer
	// before it lands.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	var body []byte
	if in != nil {
		var b []byte
		var err error
		if a, ok := in.(JSONAppender); ok {
			b, err = a.AppendJSON(make([]byte, 0, 4096))
		} else {
			b, err = json.Marshal(in)
		}
		if err != nil {
			return fmt.Errorf("encoding the request for %s %s: %w", method, path, err)
		}
		body = b
	}
	f, pid, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	if c.peer != nil {
		c.peer(pid)
	}
	if ctx.Done() != nil {
		// A deadline too: the context is done at it.
		stop := context.AfterFunc(ctx, f.abort)
		defer stop()
	}
	if c.answer > 0 {
		f.patience = newPatience(c.socket, c.answer, pid)
		if err := f.patience.arm(f.fd); err != nil {
			return fmt.Errorf("talking to slurmd-lite at %s: %w", c.socket, err)
		}
	}
	fail := func(err error) error {
		if f.patience != nil {
			if na := f.patience.dead.Load(); na != nil {
				return na
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("talking to slurmd-lite at %s: %w", c.socket, err)
	}
	var req bytes.Buffer
	// The host names nothing (the socket is the address); it reads well in
	// the daemon's logs.
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: slurmd-lite\r\nConnection: close\r\n", method, path)
	if in != nil {
		fmt.Fprintf(&req, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	if accept != "" {
		req.WriteString("Accept: " + accept + "\r\n")
	}
	req.WriteString("\r\n")
	req.Write(body)
	_, werr := f.Write(req.Bytes())
	// On a failed write, read on: the daemon refuses a request over its
	// budget (413) before reading all of it and hangs up, and that answer,
	// not the broken pipe, is what the command should print.
	// A small buffer for the small answers (a submission's is a line):
	// 64 KiB is 16 pages to fault in. Answers of thousands of jobs
	// (decode) read in large blocks.
	size := 4 << 10
	if decode != nil {
		size = 64 << 10
	}
	br := bufio.NewReaderSize(f, size)
	head, err := readHead(br)
	if err != nil {
		if werr != nil {
			return fail(werr)
		}
		return fail(err)
	}
	status, statusText, rd := head.status, head.text, head.body
	if status/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(rd, 1<<20))
		e := &api.Error{}
		if err := json.Unmarshal(b, e); err != nil || e.Message == "" {
			e = &api.Error{Message: strings.TrimSpace(string(b))}
			if e.Message == "" {
				e.Message = statusText
			}
		}
		e.Status = status
		return e
	}
	if decode != nil {
		if err := decode(head.contentType, rd); err != nil {
			return fmt.Errorf("reading slurmd-lite's answer to %s %s: %w", method, path, err)
		}
		return nil
	}
	if out == nil {
		return nil
	}
	if d, ok := out.(AnswerDecoder); ok {
		b, err := io.ReadAll(rd)
		if err != nil {
			return fmt.Errorf("reading slurmd-lite's answer to %s %s: %w", method, path, err)
		}
		if d.DecodeAnswer(b) {
			return nil
		}
		rd = bytes.NewReader(b)
	}
	// Lenient, unlike the server: a newer daemon may add fields that this
	// client does not know.
	if err := json.NewDecoder(rd).Decode(out); err != nil {
		return fmt.Errorf("reading slurmd-lite's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// Reach connects to the daemon and hangs up without asking anything: nil
// when one listens, else why it cannot be reached (*UnreachableError).
func (c *Client) Reach(ctx context.Context) error {
	f, _, err := c.dial(ctx)
	if err != nil {
		return err
	}
	return f.Close()
}

// dial connects to the socket, or explains why it cannot; pid is the
// daemon's. The socket connects non-blocking, so that a full backlog (a
// daemon that stopped accepting) is retried until the context or
// MessageTimeout ends rather than blocking in connect; then it blocks
// (see conn).
func (c *Client) dial(ctx context.Context) (f *conn, pid int, err error) {
	if len(c.socket) > maxSocketPath {
		return nil, 0, &UnreachableError{Socket: c.socket, Err: fmt.Errorf("socket path %s is %d bytes long, more than the %d a Unix socket may have; set a shorter SocketPath", c.socket, len(c.socket), maxSocketPath)}
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("talking to slurmd-lite at %s: %w", c.socket, err)
	}
	start := clock.Start()
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: c.socket})
		if err == syscall.EINTR {
			continue
		}
		if err != syscall.EAGAIN {
			break
		}
		if c.answer > 0 && start.Elapsed() > c.answer {
			syscall.Close(fd)
			return nil, 0, &NotAnsweringError{Socket: c.socket, Timeout: c.answer}
		}
		select {
		case <-ctx.Done():
			syscall.Close(fd)
			return nil, 0, fmt.Errorf("connecting to slurmd-lite at %s: %w", c.socket, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err != nil {
		syscall.Close(fd)
		ue := unreachable(c.socket, err)
		if c.advice != nil {
			ue.Advice = c.advice()
		}
		return nil, 0, ue
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, 0, fmt.Errorf("talking to slurmd-lite at %s: %w", c.socket, err)
	}
	pid = peerPID(fd)
	return &conn{fd: fd}, pid, nil
}

// answerHead is an answer's status line and the headers the client uses.
type answerHead struct {
	status      int
	text        string // the status line after the protocol: "404 Not Found"
	contentType string
	body        io.Reader // the body, as the headers frame it
}

// readHead reads the status line and the headers.
func readHead(br *bufio.Reader) (answerHead, error) {
	var h answerHead
	line, err := br.ReadString('\n')
	if err != nil {
		return h, fmt.Errorf("reading the answer: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil {
		return h, fmt.Errorf("not an HTTP answer: %q", line)
	}
	h.status, h.text = status, rest
	length, chunked := int64(-1), false
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return h, fmt.Errorf("reading the answer's headers: %w", err)
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.ParseInt(value, 10, 64); err != nil || length < 0 {
				return h, fmt.Errorf("bad Content-Length %q", value)
			}
		case "transfer-encoding":
			chunked = strings.EqualFold(value, "chunked")
		case "content-type":
			h.contentType = value
		}
	}
	switch {
	case chunked:
		h.body = &chunkReader{br: br}
	case length >= 0:
		h.body = io.LimitReader(br, length)
	default:
		h.body = br
	}
	return h, nil
}

// chunkReader reads a chunked body (RFC 9112, section 7.1), trailers
// ignored.
type chunkReader struct {
	br   *bufio.Reader
	left int64 // of the current chunk
	done bool
	err  error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for r.left == 0 && !r.done && r.err == nil {
		r.err = r.next()
	}
	if r.err != nil {
		return 0, r.err
	}
	if r.done {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.br.Read(p)
	r.left -= int64(n)
	if r.left == 0 && err == nil {
		// Each chunk's data ends with CRLF.
		if _, err = r.br.Discard(2); err != nil {
			r.err = err
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// next reads a chunk's size line; size 0 is the last chunk, then trailers
// up to a blank line.
func (r *chunkReader) next() error {
	line, err := r.br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading a chunk: %w", err)
	}
	size, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
	n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("bad chunk size %q", line)
	}
	if n > 0 {
		r.left = n
		return nil
	}
	for {
		t, err := r.br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading the trailers: %w", err)
		}
		if strings.TrimRight(t, "\r\n") == "" {
			r.done = true
			return nil
		}
	}
}
