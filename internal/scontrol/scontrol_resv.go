package scontrol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// scontrol create, update, delete and show reservation (scontrol.c's
// _create_it and _delete_it, create_res.c of 22.05). The words are read
// here, as scontrol reads them, so that its own errors come out as it
// prints them; the daemon reads them again against its clock (now+1hour
// is the daemon's now) and decides.

func init() { updateOther["ReservationName"] = (*scontrolArgs).updateResv }

// resvWords drops the entity word ("reservation", "res") that starts the
// words when it is not itself ReservationName=NAME.
func resvWords(argv []string) []string {
	if len(argv) > 0 && !strings.Contains(argv[0], "=") && keyword(argv[0], "ReservationName", 3) {
		return argv[1:]
	}
	return argv
}

// isResvEntity reports whether argv names a reservation as _create_it
// and _delete_it tell it.
func isResvEntity(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	tag, _, _ := strings.Cut(argv[0], "=")
	return keyword(tag, "ReservationName", 3)
}

// resvParseError prints a reservation's words scontrol refuses itself.
func (s *scontrolArgs) resvParseError(err error, what string) {
	s.exit = 1
	var re *api.ResvError
	if errors.As(err, &re) {
		if re.Diag != "" {
			fmt.Fprintln(s.sio.Stderr, re.Diag)
		}
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: %s  No reservation %s.\n", re.Msg, what)
		return
	}
	fmt.Fprintf(s.sio.Stderr, "scontrol: error: %v  No reservation %s.\n", err, what)
}

// resvCallError is the daemon's refusal in Slurm's words: its errno's,
// or the daemon's own message where Slurm has none.
func resvCallError(err error) (string, bool) {
	var le *sockclient.Error
	if !errors.As(err, &le) {
		return "", false
	}
	if le.Code == slurm.EINVAL || le.Code == slurm.Success {
		return le.Message, true
	}
	return cli.Strerror(le.Code, le.Message), true
}

func (s *scontrolArgs) sendResv(ch api.ResvChange) (api.Reservation, error) {
	var out api.Reservation
	if !s.connect() {
		return out, errNotConnected
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	err := s.client.Do(ctx, "POST", api.PathReservations, ch, &out)
	return out, err
}

var errNotConnected = errors.New("not connected")

// createResv is scontrol create reservation.
func (s *scontrolArgs) createResv(tag string, argv []string) {
	if !isResvEntity(argv) {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: slurm-lite's scontrol creates reservations only (create reservation ...)\n")
		return
	}
	words := resvWords(argv)
	var r api.Reservation
	if err := api.ApplyResvWords(&r, words, s.sio.Now(), true); err != nil {
		s.resvParseError(err, "created")
		return
	}
	out, err := s.sendResv(api.ResvChange{Action: api.ResvCreate, Name: r.Name, Words: words})
	if errors.Is(err, errNotConnected) {
		return
	}
	if err != nil {
		s.exit = 1
		if msg, ok := resvCallError(err); ok {
			fmt.Fprintf(s.sio.Stderr, "Error creating the reservation: %s\n", msg)
			return
		}
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	fmt.Fprintf(s.sio.Stdout, "Reservation created: %s\n", out.Name)
}

// updateResv is scontrol update ReservationName=NAME ...
func (s *scontrolArgs) updateResv(argv []string) {
	argv = resvWords(argv)
	name := ""
	for _, w := range argv {
		if k, v, ok := strings.Cut(w, "="); ok && keyword(k, "ReservationName", 3) {
			name = v
		}
	}
	var r api.Reservation
	now := s.sio.Now()
	r.Start, r.End = now, now.Add(time.Hour) // placeholders: only the words' syntax is checked here
	if err := api.ApplyResvWords(&r, argv, now, false); err != nil {
		var re *api.ResvError
		if errors.As(err, &re) && strings.HasPrefix(re.Msg, "Invalid time specified") {
			err = nil // the stored window decides; the daemon checks it
		}
		if err != nil {
			s.resvParseError(err, "updated")
			return
		}
	}
	_, err := s.sendResv(api.ResvChange{Action: api.ResvUpdate, Name: name, Words: argv})
	if errors.Is(err, errNotConnected) {
		return
	}
	if err != nil {
		s.exit = 1
		if msg, ok := resvCallError(err); ok {
			fmt.Fprintf(s.sio.Stderr, "Error updating the reservation: %s\nslurm_update error: %s\n", msg, msg)
			return
		}
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	fmt.Fprintln(s.sio.Stdout, "Reservation updated.")
}

// deleteResv is scontrol delete reservation NAME (or ReservationName=NAME).
func (s *scontrolArgs) deleteResv(tag string, argv []string) {
	if !isResvEntity(argv) {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: slurm-lite's scontrol deletes reservations only (delete reservation NAME)\n")
		return
	}
	entity, name, ok := strings.Cut(argv[0], "=")
	if !ok {
		if len(argv) < 2 {
			s.tooFew(tag)
			return
		}
		name = argv[1]
	}
	_, err := s.sendResv(api.ResvChange{Action: api.ResvDelete, Name: name})
	if errors.Is(err, errNotConnected) {
		return
	}
	if err != nil {
		s.exit = 1
		if msg, ok := resvCallError(err); ok {
			fmt.Fprintf(s.sio.Stderr, "delete_reservation %s: %s\n", entity, msg)
			return
		}
		s.exit = cli.DaemonError("scontrol", err, s.sio)
	}
}

// showResv is scontrol show reservation [NAME].
func (s *scontrolArgs) showResv(name string, hasName bool) {
	if !s.connect() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	var all api.Reservations
	if err := s.client.Do(ctx, "GET", api.PathReservations, nil, &all); err != nil {
		s.exit = callError("scontrol", "slurm_load_reservations", err, s.sio)
		return
	}
	writeResvs(s.sio.Stdout, all.List, name, hasName, s.oneLiner)
	if hasName && len(all.List) > 0 && !containsResv(all.List, name) {
		s.exit = 1
	}
}

func containsResv(list []api.Reservation, name string) bool {
	for _, r := range list {
		if r.Name == name {
			return true
		}
	}
	return false
}

func writeResvs(w io.Writer, list []api.Reservation, name string, hasName, oneLiner bool) {
	if len(list) == 0 {
		fmt.Fprintln(w, format.NoReservations)
		return
	}
	if hasName && !containsResv(list, name) {
		fmt.Fprintf(w, "Reservation %s not found\n", name)
		return
	}
	for i := range list {
		if !hasName || list[i].Name == name {
			io.WriteString(w, format.ShowReservation(&list[i], oneLiner))
		}
	}
}
