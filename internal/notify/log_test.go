package notify

import (
	"log/slog"
	"strings"
	"sync"
)

// logBuffer is a log destination that the workers may write while the
// test reads it.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLog(l *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
