package scontrol

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// token is scontrol token [lifespan=SECONDS] [username=NAME] (_fetch_token):
// the daemon mints an auth/jwt token for the caller, or root's for NAME,
// printed as SLURM_JWT=TOKEN.
func (s *scontrolArgs) token(argv []string) {
	var in api.TokenRequest
	for _, a := range argv[1:] {
		switch {
		case len(a) >= 9 && strings.EqualFold(a[:9], "lifespan="):
			// atoi, as scontrol: what is not a number is 0, the default.
			n, _ := strconv.ParseInt(leadingDigits(a[9:]), 10, 64)
			in.Lifespan = n
		case len(a) >= 9 && strings.EqualFold(a[:9], "username="):
			in.Username = a[9:]
		default:
			s.exit = 1
			fmt.Fprintf(s.sio.Stderr, "Invalid option: `%s`\n", a)
			return
		}
	}
	if !s.connect() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	var out api.Token
	if err := s.client.Do(ctx, "POST", api.PathToken, in, &out); err != nil {
		s.exit = 1
		var e *sockclient.Error
		if errors.As(err, &e) {
			fmt.Fprintf(s.sio.Stderr, "scontrol: error: slurm_fetch_token: error with request: %s\n", cli.Strerror(e.Code, e.Message))
		} else {
			fmt.Fprintf(s.sio.Stderr, "scontrol: error: %v\n", err)
		}
		fmt.Fprintln(s.sio.Stderr, "Error fetching token")
		return
	}
	fmt.Fprintf(s.sio.Stdout, "SLURM_JWT=%s\n", out.Token)
}

// leadingDigits is the number atoi reads at the start of v.
func leadingDigits(v string) string {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return v[:i]
}
