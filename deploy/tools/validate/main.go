// Command validate checks the deployment files statically, without a Docker engine or a cluster:
//
//	validate compose [-env-out FILE] docker-compose.yml
//	validate k8s [-name NAME] [-secrets FILE] [-env-out FILE] RENDERED.yaml
//	validate dockerfile deploy/Dockerfile
//
// It prints one line per check ("ok: ..." or "error: ...") and exits 1 when any check failed.
// scripts/validate-deploy.sh builds it and runs it; see that script for what each part covers.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// report collects the outcome of the checks of one subcommand.
type report struct {
	errors, oks int
}

// verbose prints every passed check too (VALIDATE_VERBOSE=1); otherwise only errors, notes and a count.
var verbose = os.Getenv("VALIDATE_VERBOSE") == "1"

func (r *report) ok(format string, args ...any) {
	r.oks++
	if verbose {
		fmt.Printf("  ok: "+format+"\n", args...)
	}
}

func (r *report) fail(format string, args ...any) {
	r.errors++
	fmt.Printf("  error: "+format+"\n", args...)
}

func (r *report) note(format string, args ...any) {
	fmt.Printf("  note: "+format+"\n", args...)
}

// check records ok or an error depending on cond.
func (r *report) check(cond bool, format string, args ...any) {
	if cond {
		r.ok(format, args...)
	} else {
		r.fail(format, args...)
	}
}

// envSets is what check-env.cjs reads: set name -> service -> variable -> value.
type envSets map[string]map[string]map[string]string

func writeEnv(path string, sets envSets) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(sets, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: validate compose|k8s|dockerfile [flags] FILE")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var r *report
	var err error
	switch os.Args[1] {
	case "compose":
		r, err = runCompose(os.Args[2:])
	case "k8s":
		r, err = runK8s(os.Args[2:])
	case "dockerfile":
		r, err = runDockerfile(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Printf("  error: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("  summary: %d checks ok, %d errors\n", r.oks, r.errors)
	if r.errors > 0 {
		os.Exit(1)
	}
}
