package sockclient

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// FuzzReadAnswer feeds the client's HTTP reader (readHead and the body it
// frames, chunked or not) whatever a broken or hostile daemon could send:
// it must never panic or read past the input, and a well-formed chunked
// answer built from the fuzzed body must decode to exactly that body.
func FuzzReadAnswer(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 404 Not Found\r\nContent-Length: 27\r\n\r\n{\"error\":\"no such job\",\"code\":2017}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.0 500\r\n\r\nbody to the end",
		"SSH-2.0-OpenSSH\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=1\r\nhi\r\n0\r\nTrailer: x\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readHead(bufio.NewReader(bytes.NewReader(data)))
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(h.body, int64(len(data))+1))
			if len(body) > len(data) {
				t.Fatalf("read a body of %d bytes from an answer of %d", len(body), len(data))
			}
		}

		// The same bytes as a chunked body, in chunks of up to 7 bytes,
		// come back whole.
		var enc strings.Builder
		enc.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 7)
			fmt.Fprintf(&enc, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		enc.WriteString("0\r\n\r\n")
		h, err = readHead(bufio.NewReader(strings.NewReader(enc.String())))
		if err != nil {
			t.Fatalf("a well-formed chunked answer: %v", err)
		}
		got, err := io.ReadAll(h.body)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("chunked %q came back as %q (%v)", data, got, err)
		}
	})
}
