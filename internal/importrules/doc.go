// Package importrules holds no code: its test is the table of what may
// import what (docs/architecture.md), checked on every `make test`, so that
// a rule that breaks fails the build rather than a benchmark months later.
package importrules
