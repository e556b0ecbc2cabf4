package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// The production compose profile (docker-compose.prod.yml): every secret is required, so the file
// does not load without it. Secrets are variables named like one; optional features are exempt
// (a provider's OAuth client, the LLM planner's key: empty turns them off).
var (
	varRef        = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)
	requiredRef   = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:?\?)`)
	secretName    = regexp.MustCompile(`(PASSWORD|PASS|SECRET|_KEY|_KEYS)$`)
	optionalName  = regexp.MustCompile(`(_CLIENT_ID|_CLIENT_SECRET|^LLM_API_KEY)$`)
	productionEnv = []string{"gateway", "oauth-vault", "webhook-dispatcher", "bootstrap"}
)

// sampleEnv gives every variable the file requires a well-formed random value (never a real one).
func sampleEnv(raw []byte) map[string]string {
	env := map[string]string{}
	for _, m := range requiredRef.FindAllStringSubmatch(string(raw), -1) {
		env[m[1]] = sampleValue(m[1])
	}
	return env
}

func sampleValue(name string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	switch {
	case strings.HasSuffix(name, "_KEYS"):
		return "k1:" + base64.StdEncoding.EncodeToString(b)
	case strings.HasSuffix(name, "_URL"):
		return "https://site.test"
	case strings.Contains(name, "PASS"):
		return hex.EncodeToString(b[:24]) // goes into URLs
	default:
		return base64.RawURLEncoding.EncodeToString(b)
	}
}

func envList(env map[string]string, without string) []string {
	var out []string
	for _, k := range sortedKeys(env) {
		if k != without {
			out = append(out, k+"="+env[k])
		}
	}
	return out
}

func loadCompose(file string, env []string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{file}, cli.WithWorkingDirectory(filepath.Dir(file)), cli.WithName("tes"), cli.WithEnv(env))
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

// checkProductionSecrets: each secret the file names is required (loading without it fails).
func checkProductionSecrets(r *report, file string, raw []byte, env map[string]string) {
	seen := map[string]bool{}
	for _, m := range varRef.FindAllStringSubmatch(string(raw), -1) {
		name := m[1]
		if seen[name] || !secretName.MatchString(name) || optionalName.MatchString(name) {
			continue
		}
		seen[name] = true
		_, err := loadCompose(file, envList(env, name))
		r.check(err != nil && strings.Contains(err.Error(), name), "production: %s is required (${%s:?...}): the file does not load without it", name, name)
	}
	r.check(len(seen) > 0, "production: secrets found (%d)", len(seen))
}

// checkProductionRules: NODE_ENV=production, a MongoDB user per service, LLM_* passed, RabbitMQ 4+.
func checkProductionRules(r *report, project *types.Project) {
	for _, name := range productionEnv {
		if svc, ok := project.Services[name]; ok {
			v := svc.Environment["NODE_ENV"]
			r.check(v != nil && *v == "production", "production: %s has NODE_ENV=production", name)
		}
	}
	users := map[string]string{}
	for _, name := range sortedKeys(appServices) {
		svc, ok := project.Services[name]
		if !ok {
			continue
		}
		url := ""
		if v := svc.Environment["MONGO_URL"]; v != nil {
			url = *v
		}
		user := ""
		if at := strings.Index(url, "@"); strings.HasPrefix(url, "mongodb://") && at > 0 {
			user = strings.SplitN(strings.TrimPrefix(url[:at], "mongodb://"), ":", 2)[0]
		}
		r.check(user != "" && strings.Contains(url, "replicaSet="), "production: %s connects to MongoDB as its own user, to the replica set", name)
		if other, dup := users[user]; dup && user != "" {
			r.fail("production: %s and %s share the MongoDB user %s", name, other, user)
		}
		users[user] = name
	}
	if orch, ok := project.Services["task-orchestrator"]; ok {
		for _, k := range []string{"LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"} {
			_, passed := orch.Environment[k]
			r.check(passed, "production: task-orchestrator gets %s", k)
		}
	}
	if mongo, ok := project.Services["mongo"]; ok {
		pw := mongo.Environment["MONGO_INITDB_ROOT_PASSWORD"]
		r.check(pw != nil && *pw != "" && strings.Contains(strings.Join(mongo.Entrypoint, " "), "--replSet"),
			"production: mongo with authentication (root password) as a replica set")
	}
	if rabbit, ok := project.Services["rabbitmq"]; ok {
		tag := rabbit.Image[strings.LastIndex(rabbit.Image, ":")+1:]
		major, err := strconv.Atoi(strings.SplitN(tag, ".", 2)[0])
		r.check(err == nil && major >= 4, "production: rabbitmq image %s is 4.x or later (3.13 left community support)", rabbit.Image)
	}
}

// checkLocalOnlyPorts: the database and the broker publish nothing beyond this host.
func checkLocalOnlyPorts(r *report, project *types.Project) {
	for _, name := range []string{"mongo", "rabbitmq"} {
		svc, ok := project.Services[name]
		if !ok {
			continue
		}
		for _, p := range svc.Ports {
			r.check(p.HostIP == "127.0.0.1" || p.HostIP == "::1", "%s: port %d published on %q only (127.0.0.1)", name, p.Target, p.HostIP)
		}
	}
}

// writeSampleEnv writes the sample values as an env file (for docker-compose v1's --env-file).
func writeSampleEnv(path string, env map[string]string) error {
	if path == "" {
		return nil
	}
	return os.WriteFile(path, []byte(strings.Join(envList(env, ""), "\n")+"\n"), 0o600)
}
