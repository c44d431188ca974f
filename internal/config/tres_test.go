package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTRES(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    TRES
		str     string
		wantErr string
	}{
		{"empty is no limit", "", nil, "", ""},
		{"GPUs and CPUs", "gres/gpu=4,cpu=16", TRES{"gres/gpu": 4, "cpu": 16}, "cpu=16,gres/gpu=4", ""},
		{"names in any case, spaces around items", " CPU=2 , GRES/gpu:A100=1 ", TRES{"cpu": 2, "gres/gpu:a100": 1}, "cpu=2,gres/gpu:a100=1", ""},
		{"memory with a unit counts megabytes", "mem=64G", TRES{"mem": 65536}, "mem=64G", ""},
		{"memory without a unit is megabytes", "mem=1500", TRES{"mem": 1500}, "mem=1500M", ""},
		{"shards, nodes and billing", "gres/shard=40,node=1,billing=8", TRES{"gres/shard": 40, "node": 1, "billing": 8}, "node=1,billing=8,gres/shard=40", ""},
		{"an unknown TRES", "license/matlab=1", nil, "", `unknown TRES "license/matlab" (slurm-lite counts cpu, mem, node, billing, gres/gpu, gres/gpu:TYPE and gres/shard)`},
		{"a name twice", "cpu=1,CPU=2", nil, "", `TRES "cpu" is given twice`},
		{"no value", "cpu=", nil, "", `"cpu=" is not NAME=VALUE`},
		{"no name", "=4", nil, "", `"=4" is not NAME=VALUE`},
		{"a trailing comma", "cpu=4,", nil, "", `"" is not NAME=VALUE`},
		{"a negative count", "gres/gpu=-1", nil, "", "gres/gpu=-1: want a whole number of at least 0"},
		{"a fraction", "cpu=1.5", nil, "", "cpu=1.5: want a whole number of at least 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTRES(tt.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TRES (-want +got):\n%s", diff)
			}
			if err == nil && got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
		})
	}
}

func TestParseTRESWeights(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    TRESWeights
		str     string
		wantErr string
	}{
		{"empty bills CPUs", "", TRESWeights{}, "", ""},
		{"the man page's example", "CPU=1.0,Mem=0.25G,GRES/gpu=2.0", TRESWeights{"cpu": 1, "mem": 0.25 / 1024, "gres/gpu": 2}, "cpu=1,mem=0.000244140625,gres/gpu=2", ""},
		{"GPU-seconds only", "CPU=0,Mem=0,GRES/gpu=1.0", TRESWeights{"cpu": 0, "mem": 0, "gres/gpu": 1}, "cpu=0,mem=0,gres/gpu=1", ""},
		{"a memory weight per megabyte", "mem=2M", TRESWeights{"mem": 2}, "mem=2", ""},
		{"a memory weight per terabyte", "mem=1024T", TRESWeights{"mem": 1.0 / 1024}, "mem=0.0009765625", ""},
		{"negative, as Slurm allows", "cpu=-1", TRESWeights{"cpu": -1}, "cpu=-1", ""},
		{"not a number", "cpu=lots", nil, "", "cpu=lots: want a number such as 1.0 or 0.25G"},
		{"infinity", "cpu=Inf", nil, "", "cpu=Inf: want a number such as 1.0 or 0.25G"},
		{"an unknown TRES", "disk=1", nil, "", `unknown TRES "disk" (slurm-lite counts cpu, mem, node, billing, gres/gpu, gres/gpu:TYPE and gres/shard)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTRESWeights(tt.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
			if err == nil && got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
		})
	}
}
