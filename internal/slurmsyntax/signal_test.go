package slurmsyntax

import (
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestParseSignal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    SignalSpec
		wantErr bool
	}{
		{name: "a name", in: "USR1", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 60}},
		{name: "a name with SIG and seconds", in: "SIGUSR1@30", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 30}},
		{name: "to the batch shell", in: "B:USR1@30", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 30, Batch: true}},
		{name: "a number", in: "10@120", want: SignalSpec{Signal: 10, Seconds: 120}},
		{name: "lower case", in: "sigterm", want: SignalSpec{Signal: syscall.SIGTERM, Seconds: 60}},
		{name: "reservation", in: "R:TERM", want: SignalSpec{Signal: syscall.SIGTERM, Seconds: 60, Reservation: true}},
		{name: "both flags", in: "RB:USR2@5", want: SignalSpec{Signal: syscall.SIGUSR2, Seconds: 5, Batch: true, Reservation: true}},
		{name: "both flags the other way round", in: "BR:USR2", want: SignalSpec{Signal: syscall.SIGUSR2, Seconds: 60, Batch: true, Reservation: true}},
		{name: "a flag without a colon, as get_signal_opts reads it", in: "BUSR1", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 60, Batch: true}},
		{name: "lower-case flag", in: "b:USR1", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 60, Batch: true}},
		{name: "zero seconds", in: "USR1@0", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 0}},
		{name: "the most seconds", in: "USR1@65535", want: SignalSpec{Signal: syscall.SIGUSR1, Seconds: 65535}},
		{name: "an unknown name", in: "FOO", wantErr: true},
		{name: "a name Slurm does not know", in: "SEGV", wantErr: true},
		{name: "signal zero", in: "0", wantErr: true},
		{name: "a negative signal", in: "-1", wantErr: true},
		{name: "a signal beyond 16 bits", in: "65536", wantErr: true},
		{name: "seconds beyond 16 bits", in: "USR1@65536", wantErr: true},
		{name: "negative seconds", in: "USR1@-1", wantErr: true},
		{name: "no seconds after @", in: "USR1@", wantErr: true},
		{name: "text after the seconds", in: "USR1@30s", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "a flag only", in: "B:", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSignal(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseSignal(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSignal(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseSignalName(t *testing.T) {
	tests := []struct {
		in      string
		want    syscall.Signal
		wantErr bool
	}{
		{in: "KILL", want: syscall.SIGKILL},
		{in: "SIGKILL", want: syscall.SIGKILL},
		{in: " sigint ", want: syscall.SIGINT},
		{in: "9", want: syscall.SIGKILL},
		{in: " 15 ", want: syscall.SIGTERM},
		{in: "XCPU", want: syscall.SIGXCPU},
		{in: "USR", wantErr: true},
		{in: "URGENT", wantErr: true},
		{in: "SIG", wantErr: true},
		{in: "9x", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseSignalName(tt.in)
		if (err != nil) != tt.wantErr {
			t.Fatalf("ParseSignalName(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
		}
		if got != tt.want {
			t.Errorf("ParseSignalName(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestSignalNameAndString(t *testing.T) {
	names := map[syscall.Signal]string{
		syscall.SIGUSR1: "USR1", syscall.SIGTERM: "TERM", syscall.SIGCONT: "CONT",
		syscall.SIGSEGV: "11", 40: "40",
	}
	for sig, want := range names {
		if got := SignalName(sig); got != want {
			t.Errorf("SignalName(%d) = %q, want %q", sig, got, want)
		}
	}
	specs := map[string]SignalSpec{
		"USR1":       {Signal: syscall.SIGUSR1, Seconds: 60},
		"B:USR1@30":  {Signal: syscall.SIGUSR1, Seconds: 30, Batch: true},
		"RB:11@0":    {Signal: syscall.SIGSEGV, Seconds: 0, Batch: true, Reservation: true},
		"R:TERM@120": {Signal: syscall.SIGTERM, Seconds: 120, Reservation: true},
	}
	for want, spec := range specs {
		if got := spec.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", spec, got, want)
		}
	}
}

func TestSignalRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := SignalSpec{
			Signal:      syscall.Signal(rapid.IntRange(1, 0xffff).Draw(t, "signal")),
			Seconds:     rapid.IntRange(0, 0xffff).Draw(t, "seconds"),
			Batch:       rapid.Bool().Draw(t, "batch"),
			Reservation: rapid.Bool().Draw(t, "reservation"),
		}
		s := spec.String()
		got, err := ParseSignal(s)
		if err != nil {
			t.Fatalf("ParseSignal(%q): %v", s, err)
		}
		if diff := cmp.Diff(spec, got); diff != "" {
			t.Fatalf("ParseSignal(%q) (-want +got):\n%s", s, diff)
		}
	})
}
