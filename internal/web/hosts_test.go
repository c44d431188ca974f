package web

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The names a listener answers to, by its Listen and AllowedHosts (the
// rule of Hosts), the Host header as browsers send it: with or without a
// port, in any case, a final dot.
func TestHostsAllows(t *testing.T) {
	own := func() []string { return []string{"gpubox", "192.0.2.7", "2001:db8::7"} }
	type c struct {
		host string
		want bool
	}
	tests := []struct {
		name    string
		listen  string
		allowed []string
		hosts   []c
	}{
		{"on the loopback: the loopback's names and addresses only", "127.0.0.1:9341", nil, []c{
			{"127.0.0.1:9341", true}, {"127.0.0.1", true}, {"127.8.9.10:80", true}, {"[::1]:9341", true}, {"[::1]", true},
			{"localhost:9341", true}, {"LOCALHOST", true}, {"localhost.", true}, {"dash.localhost:9341", false},
			{"evil.example", false}, {"evil.example:9341", false}, {"localhost.evil.example", false},
			{"127.0.0.1.nip.io:9341", false}, {"gpubox", false}, {"192.0.2.7", false}, {"0.0.0.0:9341", false},
			{"[::2]:9341", false}, {"", false}, {":9341", false},
		}},
		{"on a name: that name too", "gpubox.lab.example:9341", nil, []c{
			{"gpubox.lab.example:9341", true}, {"GPUBOX.lab.example.", true}, {"localhost", true},
			{"gpubox", false}, {"gpubox.lab.example.evil.example", false}, {"192.0.2.7:9341", false},
		}},
		{"on an address: that address too", "192.0.2.7:9341", nil, []c{
			{"192.0.2.7:9341", true}, {"192.0.2.7", true}, {"127.0.0.1", true},
			{"gpubox", false}, {"192.0.2.8", false},
		}},
		{"on an IPv6 address", "[2001:db8::7]:9341", nil, []c{
			{"[2001:db8::7]:9341", true}, {"[2001:DB8:0::7]", true}, {"[::1]:9341", true}, {"[2001:db8::8]:9341", false},
		}},
		{"with AllowedHosts: those too", "127.0.0.1:9341", []string{"gpubox.lab.example", "GPUBox.", "192.0.2.9", "[2001:db8::9]"}, []c{
			{"gpubox.lab.example:9341", true}, {"gpubox", true}, {"gpubox.:80", true}, {"192.0.2.9", true},
			{"[2001:db8::9]:9341", true}, {"127.0.0.1", true},
			{"lab.example", false}, {"www.gpubox.lab.example", false}, {"192.0.2.7", false},
		}},
		{"on every address with no AllowedHosts: the machine's own names and addresses", "0.0.0.0:9341", nil, []c{
			{"gpubox:9341", true}, {"GPUBOX", true}, {"192.0.2.7:9341", true}, {"[2001:db8::7]:9341", true},
			{"0.0.0.0:9341", true}, {"localhost", true}, {"127.0.0.1", true},
			{"evil.example", false}, {"192.0.2.8", false},
		}},
		{"on every IPv6 address, the same", "[::]:9341", nil, []c{
			{"gpubox", true}, {"[::]:9341", true}, {"evil.example", false},
		}},
		{"with no host, the same", ":9341", nil, []c{
			{"gpubox", true}, {"192.0.2.7", true}, {"evil.example", false},
		}},
		{"on every address with AllowedHosts: those, not the machine's", "0.0.0.0:9341", []string{"gpubox.lab.example"}, []c{
			{"gpubox.lab.example:9341", true}, {"localhost", true},
			{"gpubox", false}, {"192.0.2.7", false}, {"evil.example", false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHosts(tc.listen, tc.allowed, "", nil)
			h.own = own
			for _, hc := range tc.hosts {
				if got := h.Allows(hc.host); got != hc.want {
					t.Errorf("Listen %q, AllowedHosts %q: Host %q allowed: %v, want %v", tc.listen, tc.allowed, hc.host, got, hc.want)
				}
			}
		})
	}
}

// serveOn serves box() on a real listener at addr with its Host rule,
// logging to log: the address to dial.
func serveOn(t *testing.T, addr string, allowed []string, log *slog.Logger) string {
	t.Helper()
	ln, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := Serve(ln, Handler(fixed{st: box()}, quiet()), NewHosts(addr, allowed, "/etc/slurm-lite/slurm-lite.toml", log))
	t.Cleanup(func() { _ = srv.Shutdown(t.Context()) })
	_, port, _ := net.SplitHostPort(srv.Addr())
	return net.JoinHostPort("127.0.0.1", port)
}

// getAs is a real HTTP GET of path from the listener at addr with its
// Host header forged to host.
func getAs(t *testing.T, addr, host, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// A page elsewhere that points a name of its own at this machine (DNS
// rebinding) sends that name as Host: every route refuses it with 421
// and says which key to set, and the log says it once per name. The
// listener's own names are answered.
func TestTheListenerAnswersOnlyItsNames(t *testing.T) {
	var logs bytes.Buffer
	addr := serveOn(t, "127.0.0.1:0", []string{"gpubox.lab.example"}, slog.New(slog.NewTextHandler(&logs, nil)))
	_, port, _ := net.SplitHostPort(addr)
	for _, path := range Paths() {
		for _, host := range []string{"evil.example:" + port, "evil.example"} {
			code, body := getAs(t, addr, host, path)
			want := `slurm-lite: the dashboard does not answer to the name "evil.example". It answers to the host of [Web] Listen, ` +
				"to localhost and loopback addresses, and to the names in [Web] AllowedHosts, so that a page on another site " +
				"cannot read it by pointing a name of its own at this machine (DNS rebinding).\n" +
				`If "evil.example" is a name of this machine, list it in slurmd-lite's configuration and restart slurmd-lite:` + "\n\n" +
				"[Web]\nAllowedHosts = [\"evil.example\"]\n"
			if code != http.StatusMisdirectedRequest || body != want {
				t.Errorf("GET %s with Host %q: %d\n%s\nwant 421 and\n%s", path, host, code, body, want)
			}
		}
		for _, host := range []string{addr, "localhost:" + port, "[::1]:" + port, "127.0.0.2", "gpubox.lab.example:" + port, "GPUBOX.LAB.EXAMPLE"} {
			if code, body := getAs(t, addr, host, path); code != http.StatusOK {
				t.Errorf("GET %s with Host %q: %d %s, want 200", path, host, code, body)
			}
		}
	}
	if n := strings.Count(logs.String(), "refused a request"); n != 1 ||
		!strings.Contains(logs.String(), `host=evil.example config=/etc/slurm-lite/slurm-lite.toml`) {
		t.Errorf("the log of %d refusals of one name:\n%s", 2*len(Paths()), logs.String())
	}

	// HTTP/1.0 without a Host header at all: refused too.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(conn, "GET /api/dashboard HTTP/1.0\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(string(b), "names no host") {
		t.Errorf("a request with no Host: %d %s", resp.StatusCode, b)
	}
}

// On every address (0.0.0.0) with no AllowedHosts, the listener answers
// to this machine's own hostname and addresses as the system gives them.
func TestTheListenerOnEveryAddressAnswersTheMachinesNames(t *testing.T) {
	addr := serveOn(t, "0.0.0.0:0", nil, nil)
	name, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname: %v", err)
	}
	hosts := []string{name, strings.ToUpper(name) + ".", "0.0.0.0", "localhost"}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
			hosts = append(hosts, net.JoinHostPort(n.IP.String(), "80"))
		}
	}
	for _, host := range hosts {
		if code, body := getAs(t, addr, host, "/api/dashboard"); code != http.StatusOK {
			t.Errorf("GET /api/dashboard with Host %q (this machine's): %d %s", host, code, body)
		}
	}
	if code, _ := getAs(t, addr, "evil.example", "/metrics"); code != http.StatusMisdirectedRequest {
		t.Errorf("GET /metrics with Host evil.example on 0.0.0.0: %d, want 421", code)
	}
	// With AllowedHosts, those names only (and the loopback's).
	addr = serveOn(t, "0.0.0.0:0", []string{"gpubox.lab.example"}, nil)
	for host, want := range map[string]int{name: http.StatusMisdirectedRequest, "gpubox.lab.example": 200, "127.0.0.1": 200} {
		if name == "localhost" && host == name {
			continue
		}
		if code, _ := getAs(t, addr, host, "/"); code != want {
			t.Errorf("0.0.0.0 with AllowedHosts: GET / with Host %q: %d, want %d", host, code, want)
		}
	}
}
