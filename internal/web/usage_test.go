package web

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestUsageRoute: /api/usage asks the source for the month named (or this
// one) and serves its JSON; a month written wrongly is refused with how to
// write it, and the source is not asked.
func TestUsageRoute(t *testing.T) {
	h := Handler(fixed{st: box()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	code, hdr, body := get(t, h, "/api/usage?month=2026-11")
	var u Usage
	if err := json.Unmarshal([]byte(body), &u); err != nil || code != http.StatusOK || u.Month != "2026-11" {
		t.Errorf("GET /api/usage?month=2026-11: %d %v %+v\n%s", code, err, u, body)
	}
	if hdr.Get("Content-Type") != "application/json" || hdr.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", hdr)
	}
	code, _, body = get(t, h, "/api/usage?month=11/2026")
	if code != http.StatusBadRequest || !strings.Contains(body, `month="11/2026" is not a month; write it as YYYY-MM, e.g. month=`) {
		t.Errorf("a bad month: %d %s", code, body)
	}
	code, _, body = get(t, h, "/usage.html")
	if code != http.StatusOK || !strings.Contains(body, `<script src="usage.js"></script>`) {
		t.Errorf("GET /usage.html: %d %s", code, body)
	}
}
