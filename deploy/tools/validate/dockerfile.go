package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerui"
	digest "github.com/opencontainers/go-digest"
)

// offlineImages answers BuildKit's base-image lookups without a registry: a linux/amd64 image with
// the usual PATH. Lint rules that need a real image's config are therefore not exercised.
type offlineImages struct{}

func (offlineImages) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	cfg, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config":       map[string]any{"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + strings.Repeat("0", 64)}},
	})
	return ref, "", cfg, err
}

// runDockerfile runs BuildKit's own Dockerfile checks (what `docker build --check` runs, all
// stages, every rule on) through the Dockerfile frontend's lint entry point, then the project's rules.
func runDockerfile(args []string) (*report, error) {
	fs := flag.NewFlagSet("dockerfile", flag.ExitOnError)
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return nil, fmt.Errorf("dockerfile: one file expected")
	}
	path := fs.Arg(0)
	dt, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &report{}
	ctx := context.Background()

	st := llb.Scratch()
	def, err := st.Marshal(ctx)
	if err != nil {
		return nil, err
	}
	sm := llb.NewSourceMap(&st, path, "Dockerfile", dt)
	sm.Definition = def
	res, err := dockerfile2llb.DockerfileLint(ctx, dt, dockerfile2llb.ConvertOpt{
		Config:       dockerui.Config{BuildArgs: map[string]string{"SERVICE": "gateway"}, LinterConfig: &linter.Config{ExperimentalAll: true}},
		SourceMap:    sm,
		MetaResolver: offlineImages{},
	})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		r.fail("BuildKit: %s", res.Error.Message)
	}
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil && len(w.Location.Ranges) > 0 && w.Location.Ranges[0].Start != nil {
			line = int(w.Location.Ranges[0].Start.Line)
		}
		r.fail("BuildKit check %s (line %d): %s", w.RuleName, line, w.Detail)
	}
	if res.Error == nil && len(res.Warnings) == 0 {
		r.ok("BuildKit Dockerfile checks (docker build --check rules, experimental included): no warning")
	}

	ast, err := parser.Parse(bytes.NewReader(dt))
	if err != nil {
		return nil, err
	}
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		return nil, err
	}
	byName := map[string]instructions.Stage{}
	for _, s := range stages {
		byName[s.Name] = s
	}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if kv.Key == "NODE_IMAGE" && kv.Value != nil {
				v := *kv.Value
				r.check(strings.Contains(v, ":") && !strings.HasSuffix(v, ":latest"), "base image %s pinned to a tag", v)
			}
		}
	}
	for _, target := range []string{"service", "admin"} {
		s, ok := byName[target]
		if !r.checkFound(ok, "target %s", target) {
			continue
		}
		user, entry, health := "", []string(nil), false
		for _, cmd := range stageChain(s, byName) {
			switch c := cmd.(type) {
			case *instructions.UserCommand:
				user = c.User
			case *instructions.EntrypointCommand:
				entry = c.CmdLine
			case *instructions.HealthCheckCommand:
				health = c.Health != nil && len(c.Health.Test) > 0 && c.Health.Test[0] != "NONE"
			}
		}
		r.check(user != "" && user != "root" && !strings.HasPrefix(user, "0"), "target %s: runs as non-root user %q", target, user)
		r.check(len(entry) > 0 && strings.HasSuffix(entry[0], "tini"), "target %s: tini is the entrypoint (PID 1)", target)
		if target == "service" {
			r.check(health, "target service: HEALTHCHECK")
			cmd := lastCmd(s)
			r.check(len(cmd) >= 2 && cmd[0] == "node" && cmd[len(cmd)-1] == "dist/main.js", "target service: CMD [\"node\", <flags>..., \"dist/main.js\"]")
			r.check(slices.Contains(cmd, "--max-semi-space-size=1"), "target service: CMD keeps the young generation small (--max-semi-space-size=1)")
		}
	}
	return r, nil
}

// stageChain returns the commands of a stage after those of the stages it is FROM, oldest first.
func stageChain(s instructions.Stage, byName map[string]instructions.Stage) []instructions.Command {
	if parent, ok := byName[s.BaseName]; ok && parent.Name != s.Name {
		return append(stageChain(parent, byName), s.Commands...)
	}
	return s.Commands
}

func lastCmd(s instructions.Stage) []string {
	var out []string
	for _, c := range s.Commands {
		if cmd, ok := c.(*instructions.CmdCommand); ok {
			out = cmd.CmdLine
		}
	}
	return out
}
