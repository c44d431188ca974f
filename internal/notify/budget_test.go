package notify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A budget's events go to the hooks without Users, and to those with one
// of the account's users; the body carries the budget and its subject.
func TestBudgetEvents(t *testing.T) {
	b := &Budget{Account: "lab", TRES: "gres/gpu", Used: 48, Limit: 60, Users: []string{"alice", "bob"},
		Resets: time.Date(2030, 1, 8, 0, 0, 0, 0, time.UTC)}
	ev := Event{Kind: Budget80, Budget: b}
	for _, tt := range []struct {
		hook Hook
		want bool
	}{
		{Hook{Events: []string{All}}, true},
		{Hook{Events: []string{Budget100}}, false},
		{Hook{Events: []string{Budget80}, Users: []string{"bob"}}, true},
		{Hook{Events: []string{Budget80}, Users: []string{"carol"}}, false},
	} {
		if got := tt.hook.wants(ev); got != tt.want {
			t.Errorf("hook %+v wants a budget of alice and bob: %v, want %v", tt.hook, got, tt.want)
		}
	}
	data, err := json.Marshal(NewBody(ev, "anchor"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"event":"BUDGET_80"`, `"budget":{"account":"lab","tres":"gres/gpu","used_minutes":48,"limit_minutes":60,"resets":"2030-01-08T00:00:00Z","users":["alice","bob"]}`,
		`"subject":"Slurm budget: account lab has used 80% of its GrpTRESMins gres/gpu=60 (48 minutes); usage resets at 2030-01-08T00:00:00"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("body %s\nlacks %s", data, want)
		}
	}
}
