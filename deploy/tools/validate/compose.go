package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/compose-spec/compose-go/v2/types"
)

// The five services and what each must publish (container ports) in docker-compose.yml.
var appServices = map[string][]uint32{
	"gateway":            {8443, 8081},
	"task-orchestrator":  nil,
	"executor":           nil,
	"oauth-vault":        {8093},
	"webhook-dispatcher": nil,
}

// runCompose loads the file with compose-go, the loader of `docker compose` v2: the Compose
// Specification's JSON schema, interpolation, merge keys, normalisation. Then the project's rules.
func runCompose(args []string) (*report, error) {
	fs := flag.NewFlagSet("compose", flag.ExitOnError)
	envOut := fs.String("env-out", "", "write each service's environment as JSON here")
	profile := fs.String("profile", "evaluation", "evaluation (defaults allowed) or production (every secret required)")
	setName := fs.String("name", "compose", "name of this environment set in -env-out")
	sampleOut := fs.String("sample-env-out", "", "production: write the sample values used for the required variables here")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return nil, fmt.Errorf("compose: one file expected")
	}
	file, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return nil, err
	}
	r := &report{}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	// Only the defaults written in the file: the validation must not depend on this shell's env. The
	// production profile requires its secrets: they get random sample values (sampleEnv).
	sample := map[string]string{}
	if *profile == "production" {
		sample = sampleEnv(raw)
	}
	project, err := loadCompose(file, envList(sample, ""))
	if err != nil {
		return nil, fmt.Errorf("compose-go (Compose Specification schema): %w", err)
	}
	r.ok("compose-go %s: schema, interpolation and references valid (%d services, %d volumes)", "v2", len(project.Services), len(project.Volumes))
	checkLocalOnlyPorts(r, project)
	switch *profile {
	case "production":
		checkProductionSecrets(r, file, raw, sample)
		checkProductionRules(r, project)
		if err := writeSampleEnv(*sampleOut, sample); err != nil {
			return nil, err
		}
	case "evaluation":
	default:
		return nil, fmt.Errorf("compose: -profile evaluation or production")
	}

	env := envSets{*setName: {}}
	for _, name := range []string{"mongo", "rabbitmq"} {
		svc, found := project.Services[name]
		if !r.checkFound(found, "service %s", name) {
			continue
		}
		r.check(svc.HealthCheck != nil && len(svc.HealthCheck.Test) > 0 && !svc.HealthCheck.Disable, "%s: healthcheck", name)
		named := false
		for _, v := range svc.Volumes {
			if v.Type == types.VolumeTypeVolume {
				_, declared := project.Volumes[v.Source]
				named = named || declared
			}
		}
		r.check(named, "%s: data on a named volume", name)
		r.checkLimits(svc)
	}

	for _, name := range sortedKeys(appServices) {
		svc, found := project.Services[name]
		if !r.checkFound(found, "service %s", name) {
			continue
		}
		b := svc.Build
		r.check(b != nil && b.Dockerfile == "deploy/Dockerfile" && b.Args["SERVICE"] != nil && *b.Args["SERVICE"] == name,
			"%s: built from deploy/Dockerfile with SERVICE=%s", name, name)
		for _, dep := range []string{"mongo", "rabbitmq"} {
			d, ok := svc.DependsOn[dep]
			r.check(ok && d.Condition == types.ServiceConditionHealthy, "%s: depends_on %s: service_healthy", name, dep)
		}
		vars := map[string]string{}
		for k, v := range svc.Environment {
			if v != nil {
				vars[k] = *v
			}
		}
		env[*setName][name] = vars
		for _, k := range []string{"AMQP_URL", "MONGO_URL", "MONGO_DB", "OPS_PORT"} {
			r.check(vars[k] != "", "%s: %s set", name, k)
		}
		r.check(svc.HealthCheck != nil && len(svc.HealthCheck.Test) > 0, "%s: healthcheck", name)
		r.checkLimits(svc)
		var published []uint32
		for _, p := range svc.Ports {
			published = append(published, p.Target)
		}
		for _, want := range appServices[name] {
			r.check(slices.Contains(published, want), "%s: publishes %d", name, want)
		}
		if len(appServices[name]) > 0 {
			r.check(vars["HOST"] == "0.0.0.0", "%s: HOST=0.0.0.0 so its published ports answer", name)
		} else {
			r.check(len(svc.Ports) == 0, "%s: publishes nothing", name)
		}
	}

	if boot, found := project.Services["bootstrap"]; r.checkFound(found, "service bootstrap (one-shot first account)") {
		r.check(boot.Build != nil && boot.Build.Target == "admin", "bootstrap: built from the admin target")
		r.check(boot.Restart == "no" || boot.Restart == "", "bootstrap: not restarted")
		for _, dep := range []string{"gateway", "webhook-dispatcher"} {
			d, ok := boot.DependsOn[dep]
			r.check(ok && d.Condition == types.ServiceConditionHealthy, "bootstrap: depends_on %s: service_healthy", dep)
		}
	}
	return r, writeEnv(*envOut, env)
}

func (r *report) checkFound(found bool, format string, args ...any) bool {
	if !found {
		r.fail(format+": missing", args...)
	}
	return found
}

func (r *report) checkLimits(svc types.ServiceConfig) {
	var l *types.Resource
	if svc.Deploy != nil {
		l = svc.Deploy.Resources.Limits
	}
	r.check(l != nil && l.MemoryBytes > 0 && l.NanoCPUs > 0, "%s: deploy.resources.limits memory and cpus", svc.Name)
}
