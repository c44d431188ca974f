package web

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Usage is one month's usage (Source.Usage: what sreport's
// AccountUtilizationByUser prints for the month, as the anonymous viewer
// may see it) by account and user, in TRES-seconds
// (GPU-seconds, CPU-seconds, billing-seconds), computed as sreport does
// (slurmdbd's hourly rollup: a running job counts up to the last whole
// hour). Under PrivateData "usage" Users are empty: the anonymous viewer
// sees the accounts' totals only.
type Usage struct {
	Cluster string `json:"cluster"`
	// Month is "2026-11"; Start and End bound it (Unix seconds), and
	// RolledUp is how far its hours are counted (the last whole hour
	// before now, or End).
	Month    string `json:"month"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	RolledUp int64  `json:"rolled_up"`
	// GPUs and CPUs are the machine's; Total is every account's usage.
	GPUs     int            `json:"gpus"`
	CPUs     int            `json:"cpus"`
	Private  bool           `json:"private"`
	Total    UsageFigures   `json:"total"`
	Accounts []AccountUsage `json:"accounts"`
	// Sreport is the command that prints the same figures.
	Sreport string `json:"sreport"`
}

// UsageFigures are TRES-seconds.
type UsageFigures struct {
	GPU     int64 `json:"gpu_seconds"`
	CPU     int64 `json:"cpu_seconds"`
	Billing int64 `json:"billing_seconds"`
}

// AccountUsage is one account's total and its users'.
type AccountUsage struct {
	Account string `json:"account"`
	UsageFigures
	Users []UserUsage `json:"users"`
}

// UserUsage is one user's usage in one account.
type UserUsage struct {
	User string `json:"user"`
	UsageFigures
}

// usageHandler serves /api/usage?month=YYYY-MM (default: this month).
func usageHandler(src Source, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var month time.Time // this month, by the source's clock (the daemon's)
		if s := r.URL.Query().Get("month"); s != "" {
			m, err := time.ParseInLocation("2006-01", s, time.Local)
			if err != nil {
				http.Error(w, fmt.Sprintf("month=%q is not a month; write it as YYYY-MM, e.g. month=2026-11", s), http.StatusBadRequest)
				return
			}
			month = m
		}
		ctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
		defer cancel()
		if !month.IsZero() {
			month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.Local)
		}
		u, err := src.Usage(ctx, month)
		if err != nil {
			log.Warn("usage: reading the job records", "err", err)
			http.Error(w, "reading the job records: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(u)
	})
}
