package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Queues KEDA may scale on: the competing-consumer queues of the executor and the dispatcher.
var kedaQueues = []string{"executor.steps", "dispatcher.task-events"}

// manifests is one rendered overlay, decoded.
type manifests struct {
	deployments  map[string]*appsv1.Deployment
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	hpas         map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs         map[string]*policyv1.PodDisruptionBudget
	policies     map[string]*networkingv1.NetworkPolicy
	ingresses    map[string]*networkingv1.Ingress
	scaled       map[string]*ScaledObject
	triggerAuths map[string]*TriggerAuthentication
	jobs         map[string]*batchv1.Job
	namespaces   map[string]bool
	external     map[string]bool // Secrets referenced but not in the manifests (created out of band)
	crds         crds            // monitoring and Gateway API objects (crds.go)
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// splitDocs returns the non-empty YAML documents of a stream.
func splitDocs(data []byte) ([][]byte, error) {
	var docs [][]byte
	reader := utilyaml.NewYAMLReader(bufioReader(data))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) > 0 && strings.TrimSpace(string(doc)) != "---" {
			docs = append(docs, doc)
		}
	}
}

// decodeAll decodes every document strictly: the Kubernetes API types of k8s.io/api (unknown or
// duplicate fields and wrong types are errors, as with kubectl's strict field validation) and, for
// KEDA, the v1alpha1 field set below. Unknown kinds are errors too.
func decodeAll(r *report, data []byte, source string) *manifests {
	m := &manifests{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}, hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		policies: map[string]*networkingv1.NetworkPolicy{}, ingresses: map[string]*networkingv1.Ingress{}, scaled: map[string]*ScaledObject{},
		triggerAuths: map[string]*TriggerAuthentication{}, jobs: map[string]*batchv1.Job{}, namespaces: map[string]bool{}, external: map[string]bool{},
		crds: newCrds(),
	}
	docs, err := splitDocs(data)
	if err != nil {
		r.fail("%s: not a YAML stream: %v", source, err)
		return m
	}
	decoder := serializer.NewCodecFactory(newScheme(), serializer.EnableStrict).UniversalDeserializer()
	strictOK := 0
	for i, doc := range docs {
		var head struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Metadata   metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			r.fail("%s: document %d: %v", source, i+1, err)
			continue
		}
		id := fmt.Sprintf("%s %s/%s", source, head.Kind, head.Metadata.Name)
		if head.Metadata.Name == "" {
			r.fail("%s: document %d (%s): metadata.name missing", source, i+1, head.Kind)
			continue
		}
		if head.Metadata.Namespace != "" {
			m.namespaces[head.Metadata.Namespace] = true
		}
		if head.APIVersion == "keda.sh/v1alpha1" {
			if decodeKeda(r, m, head.Kind, doc, id) {
				strictOK++
			}
			continue
		}
		if strings.HasPrefix(head.APIVersion, "monitoring.coreos.com/") || strings.HasPrefix(head.APIVersion, "gateway.networking.k8s.io/") {
			if decodeCrd(r, m, head.APIVersion, head.Kind, doc, id) {
				strictOK++
			}
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			r.fail("%s: %v", id, err)
			continue
		}
		strictOK++
		switch o := obj.(type) {
		case *appsv1.Deployment:
			m.deployments[o.Name] = o
		case *corev1.Service:
			m.services[o.Name] = o
		case *corev1.ConfigMap:
			m.configMaps[o.Name] = o
		case *corev1.Secret:
			m.secrets[o.Name] = o
		case *corev1.Namespace:
		case *batchv1.Job:
			m.jobs[o.Name] = o
		case *autoscalingv2.HorizontalPodAutoscaler:
			m.hpas[o.Name] = o
		case *policyv1.PodDisruptionBudget:
			m.pdbs[o.Name] = o
		case *networkingv1.NetworkPolicy:
			m.policies[o.Name] = o
		case *networkingv1.Ingress:
			m.ingresses[o.Name] = o
		default:
			r.fail("%s: kind not expected here", id)
		}
	}
	r.check(strictOK == len(docs), "%s: %d/%d objects decode strictly against their API types", source, strictOK, len(docs))
	return m
}

func runK8s(args []string) (*report, error) {
	fs := flag.NewFlagSet("k8s", flag.ExitOnError)
	name := fs.String("name", "k8s", "name of this manifest set in the output")
	secretsFile := fs.String("secrets", "", "example Secrets (validated, and used to resolve secretRefs for -env-out)")
	envOut := fs.String("env-out", "", "write each Deployment's resolved environment as JSON here")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return nil, fmt.Errorf("k8s: one rendered manifest file expected")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return nil, err
	}
	r := &report{}
	m := decodeAll(r, data, *name)
	examples := map[string]*corev1.Secret{}
	if *secretsFile != "" {
		raw, err := os.ReadFile(*secretsFile)
		if err != nil {
			return nil, err
		}
		ex := decodeAll(r, raw, *secretsFile)
		examples = ex.secrets
	}
	checkWorkloads(r, m)
	checkTraffic(r, m)
	checkScaling(r, m)
	checkCrds(r, m)
	r.check(len(m.namespaces) <= 1, "%s: one namespace for every object (%s)", *name, strings.Join(sortedKeys(m.namespaces), ", "))
	for _, s := range sortedKeys(m.external) {
		_, documented := examples[s]
		if documented {
			r.ok("Secret %s: created out of band, template in %s", s, *secretsFile)
		} else {
			r.note("Secret %s: created out of band (TLS or operator-provided), not in the example file", s)
		}
	}
	env := resolveEnv(m, examples)
	for _, d := range sortedKeys(env) {
		for _, key := range []string{"TLS_CERT_FILE", "TLS_KEY_FILE"} {
			if file := env[d][key]; file != "" {
				mounted := false
				for _, vm := range m.deployments[d].Spec.Template.Spec.Containers[0].VolumeMounts {
					mounted = mounted || strings.HasPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/")
				}
				r.check(mounted, "Deployment %s: %s=%s is on a mounted volume", d, key, file)
			}
		}
	}
	return r, writeEnv(*envOut, envSets{*name: env})
}

// refSecret records a Secret reference: in the manifests, or external.
func (m *manifests) refSecret(name string) {
	if _, ok := m.secrets[name]; !ok {
		m.external[name] = true
	}
}

func checkWorkloads(r *report, m *manifests) {
	for _, name := range sortedKeys(m.jobs) {
		checkPodSpec(r, m, "Job "+name, &m.jobs[name].Spec.Template.Spec)
	}
	for _, name := range sortedKeys(m.deployments) {
		d := m.deployments[name]
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		r.check(err == nil && !sel.Empty() && sel.Matches(labels.Set(d.Spec.Template.Labels)), "Deployment %s: selector matches its pod template", name)
		checkPodSpec(r, m, "Deployment "+name, &d.Spec.Template.Spec)
		matched := 0
		for _, p := range m.pdbs {
			if s, err := metav1.LabelSelectorAsSelector(p.Spec.Selector); err == nil && s.Matches(labels.Set(d.Spec.Template.Labels)) {
				matched++
			}
		}
		r.check(matched == 1, "Deployment %s: exactly one PodDisruptionBudget selects it (%d)", name, matched)
	}
}

func probeHits(p *corev1.Probe, path string) bool {
	if p == nil {
		return false
	}
	if p.HTTPGet != nil {
		return p.HTTPGet.Path == path
	}
	return p.Exec != nil && slices.Contains(p.Exec.Command, path)
}

// podsSelected returns the Deployments whose pods a selector (a Service's map) matches.
func (m *manifests) podsSelected(sel labels.Selector) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, name := range sortedKeys(m.deployments) {
		d := m.deployments[name]
		if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, d)
		}
	}
	return out
}

func hasContainerPort(ds []*appsv1.Deployment, name string, number int32) bool {
	for _, d := range ds {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, p := range c.Ports {
				if (name != "" && p.Name == name) || (name == "" && p.ContainerPort == number) {
					return true
				}
			}
		}
	}
	return false
}

func checkTraffic(r *report, m *manifests) {
	for _, name := range sortedKeys(m.services) {
		s := m.services[name]
		pods := m.podsSelected(labels.SelectorFromSet(s.Spec.Selector))
		r.check(len(s.Spec.Selector) > 0 && len(pods) == 1, "Service %s: selects the pods of one Deployment", name)
		for _, p := range s.Spec.Ports {
			r.check(hasContainerPort(pods, p.TargetPort.StrVal, p.TargetPort.IntVal), "Service %s port %s: target port %s exists in the pods", name, p.Name, p.TargetPort.String())
		}
	}
	for _, name := range sortedKeys(m.ingresses) {
		ing := m.ingresses[name]
		r.check(ing.Spec.IngressClassName != nil && len(ing.Spec.TLS) > 0, "Ingress %s: ingressClassName and TLS", name)
		for _, t := range ing.Spec.TLS {
			m.refSecret(t.SecretName)
		}
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				r.fail("Ingress %s: rule %s without http paths", name, rule.Host)
				continue
			}
			for _, p := range rule.HTTP.Paths {
				b := p.Backend.Service
				svc, ok := m.services[b.Name]
				found := false
				if ok {
					for _, sp := range svc.Spec.Ports {
						found = found || (b.Port.Name != "" && sp.Name == b.Port.Name) || (b.Port.Name == "" && sp.Port == b.Port.Number)
					}
				}
				port := b.Port.Name
				if port == "" {
					port = fmt.Sprint(b.Port.Number)
				}
				r.check(found, "Ingress %s: %s%s -> Service %s port %s exists", name, rule.Host, p.Path, b.Name, port)
			}
		}
	}
	// Policies: named ports must exist in the pods they select, or the rule silently matches nothing.
	for _, name := range sortedKeys(m.policies) {
		np := m.policies[name]
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			r.fail("NetworkPolicy %s: %v", name, err)
			continue
		}
		pods := m.podsSelected(sel)
		ok := len(pods) > 0
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if p.Port != nil && p.Port.StrVal != "" {
					for _, d := range pods {
						ok = ok && hasContainerPort([]*appsv1.Deployment{d}, p.Port.StrVal, 0)
					}
				}
			}
		}
		r.check(ok, "NetworkPolicy %s: selects pods (%d Deployments) and its named ports exist in each", name, len(pods))
	}
}

func checkScaling(r *report, m *manifests) {
	scaler := map[string]string{}
	for _, name := range sortedKeys(m.hpas) {
		h := m.hpas[name]
		t := h.Spec.ScaleTargetRef
		_, ok := m.deployments[t.Name]
		r.check(t.Kind == "Deployment" && ok, "HorizontalPodAutoscaler %s: target Deployment %s exists", name, t.Name)
		r.check(h.Spec.MinReplicas != nil && *h.Spec.MinReplicas >= 1 && *h.Spec.MinReplicas <= h.Spec.MaxReplicas, "HorizontalPodAutoscaler %s: 1 <= min <= max", name)
		if prev, dup := scaler[t.Name]; dup {
			r.fail("Deployment %s: scaled by both %s and HorizontalPodAutoscaler %s", t.Name, prev, name)
		}
		scaler[t.Name] = "HorizontalPodAutoscaler " + name
	}
	for _, name := range sortedKeys(m.scaled) {
		so := m.scaled[name]
		t := so.Spec.ScaleTargetRef
		_, ok := m.deployments[t.Name]
		r.check(ok && (t.Kind == "" || t.Kind == "Deployment"), "ScaledObject %s: target Deployment %s exists", name, t.Name)
		if prev, dup := scaler[t.Name]; dup {
			r.fail("Deployment %s: scaled by both %s and ScaledObject %s (KEDA makes its own HPA)", t.Name, prev, name)
		} else {
			r.ok("Deployment %s: scaled by ScaledObject %s only", t.Name, name)
		}
		scaler[t.Name] = "ScaledObject " + name
		minR, maxR := int32(0), int32(100)
		if so.Spec.MinReplicaCount != nil {
			minR = *so.Spec.MinReplicaCount
		}
		if so.Spec.MaxReplicaCount != nil {
			maxR = *so.Spec.MaxReplicaCount
		}
		r.check(minR <= maxR, "ScaledObject %s: min <= max", name)
		for i, tr := range so.Spec.Triggers {
			id := fmt.Sprintf("ScaledObject %s trigger %d (%s)", name, i, tr.Type)
			for _, problem := range triggerProblems(tr) {
				r.fail("%s: %s", id, problem)
			}
			if tr.Type == "rabbitmq" {
				r.check(slices.Contains(kedaQueues, tr.Metadata["queueName"]), "%s: queue %s is a competing-consumer queue", id, tr.Metadata["queueName"])
				ok := tr.AuthenticationRef != nil && m.triggerAuths[tr.AuthenticationRef.Name] != nil
				r.check(ok, "%s: TriggerAuthentication exists", id)
			}
		}
	}
	for _, name := range sortedKeys(m.triggerAuths) {
		for _, ref := range m.triggerAuths[name].Spec.SecretTargetRef {
			m.refSecret(ref.Name)
		}
	}
	for _, name := range sortedKeys(m.deployments) {
		_, ok := scaler[name]
		r.check(ok, "Deployment %s: has an autoscaler", name)
	}
}

// resolveEnv gives each Deployment's first container its environment: envFrom ConfigMaps and
// Secrets (the example values), then env. Values from other sources are left out.
func resolveEnv(m *manifests, examples map[string]*corev1.Secret) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, name := range sortedKeys(m.deployments) {
		c := m.deployments[name].Spec.Template.Spec.Containers[0]
		vars := map[string]string{}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil && m.configMaps[ef.ConfigMapRef.Name] != nil {
				for k, v := range m.configMaps[ef.ConfigMapRef.Name].Data {
					vars[k] = v
				}
			}
			if ef.SecretRef != nil && examples[ef.SecretRef.Name] != nil {
				for k, v := range examples[ef.SecretRef.Name].StringData {
					vars[k] = v
				}
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				vars[e.Name] = e.Value
			}
		}
		out[name] = vars
	}
	return out
}

// ---- KEDA v1alpha1 (keda.sh): the fields of ScaledObject and TriggerAuthentication we may use ----

type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion             string `json:"apiVersion,omitempty"`
			Kind                   string `json:"kind,omitempty"`
			Name                   string `json:"name"`
			EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
		} `json:"scaleTargetRef"`
		PollingInterval  *int32 `json:"pollingInterval,omitempty"`
		InitialCooldown  *int32 `json:"initialCooldownPeriod,omitempty"`
		CooldownPeriod   *int32 `json:"cooldownPeriod,omitempty"`
		IdleReplicaCount *int32 `json:"idleReplicaCount,omitempty"`
		MinReplicaCount  *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount  *int32 `json:"maxReplicaCount,omitempty"`
		Advanced         *struct {
			RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
			HorizontalPodAutoscalerConfig *struct {
				Name     string                                         `json:"name,omitempty"`
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
			} `json:"horizontalPodAutoscalerConfig,omitempty"`
		} `json:"advanced,omitempty"`
		Triggers []ScaleTrigger `json:"triggers"`
		Fallback *struct {
			FailureThreshold int32 `json:"failureThreshold"`
			Replicas         int32 `json:"replicas"`
		} `json:"fallback,omitempty"`
	} `json:"spec"`
}

type ScaleTrigger struct {
	Type              string                         `json:"type"`
	Name              string                         `json:"name,omitempty"`
	UseCachedMetrics  bool                           `json:"useCachedMetrics,omitempty"`
	MetricType        autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
	Metadata          map[string]string              `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
}

type TriggerAuthentication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretTargetRef []struct {
			Parameter string `json:"parameter"`
			Name      string `json:"name"`
			Key       string `json:"key"`
		} `json:"secretTargetRef,omitempty"`
		Env []struct {
			Parameter     string `json:"parameter"`
			Name          string `json:"name"`
			ContainerName string `json:"containerName,omitempty"`
		} `json:"env,omitempty"`
	} `json:"spec"`
}

// Metadata keys of KEDA's rabbitmq and cpu scalers (keda.sh/docs/2.x/scalers).
var triggerKeys = map[string][]string{
	"rabbitmq": {"host", "hostFromEnv", "protocol", "queueName", "mode", "value", "activationValue", "vhostName", "useRegex", "excludeUnacknowledged", "operation", "pageSize", "timeout", "unsafeSsl"},
	"cpu":      {"value", "containerName"},
	"memory":   {"value", "containerName"},
}

func triggerProblems(t ScaleTrigger) []string {
	allowed, known := triggerKeys[t.Type]
	if !known {
		return []string{"trigger type not checked here (rabbitmq, cpu, memory are)"}
	}
	var out []string
	for _, k := range sortedKeys(t.Metadata) {
		if !slices.Contains(allowed, k) {
			out = append(out, fmt.Sprintf("unknown metadata key %q", k))
		}
	}
	if t.Metadata["value"] == "" {
		out = append(out, "metadata.value missing")
	}
	switch t.Type {
	case "rabbitmq":
		if mode := t.Metadata["mode"]; mode != "QueueLength" && mode != "MessageRate" {
			out = append(out, "mode must be QueueLength or MessageRate")
		} else if mode == "MessageRate" && t.Metadata["protocol"] == "amqp" {
			out = append(out, "MessageRate needs protocol http (the management API)")
		}
		if p := t.Metadata["protocol"]; p != "" && p != "amqp" && p != "http" && p != "auto" {
			out = append(out, "protocol must be amqp, http or auto")
		}
		if t.Metadata["queueName"] == "" {
			out = append(out, "queueName missing")
		}
		if t.Metadata["host"] != "" {
			out = append(out, "host (with credentials) inline: use a TriggerAuthentication")
		}
	case "cpu", "memory":
		if t.MetricType != autoscalingv2.UtilizationMetricType && t.MetricType != autoscalingv2.AverageValueMetricType {
			out = append(out, "metricType must be Utilization or AverageValue")
		}
	}
	return out
}

func strictJSON(doc []byte, into any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

func decodeKeda(r *report, m *manifests, kind string, doc []byte, id string) bool {
	switch kind {
	case "ScaledObject":
		var so ScaledObject
		if err := strictJSON(doc, &so); err != nil {
			r.fail("%s: %v", id, err)
			return false
		}
		m.scaled[so.Name] = &so
	case "TriggerAuthentication":
		var ta TriggerAuthentication
		if err := strictJSON(doc, &ta); err != nil {
			r.fail("%s: %v", id, err)
			return false
		}
		m.triggerAuths[ta.Name] = &ta
	default:
		r.fail("%s: KEDA kind not checked here", id)
		return false
	}
	return true
}

// checkPodSpec: non-root, resources, probes (long-running pods only), hardening, references.
func checkPodSpec(r *report, m *manifests, owner string, pod *corev1.PodSpec) {
	long := strings.HasPrefix(owner, "Deployment ")
	psc := pod.SecurityContext
	r.check(psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot && psc.RunAsUser != nil && *psc.RunAsUser != 0,
		"%s: runAsNonRoot with a non-zero runAsUser", owner)
	for _, c := range pod.Containers {
		id := fmt.Sprintf("%s container %s", owner, c.Name)
		req, lim := c.Resources.Requests, c.Resources.Limits
		r.check(!req.Cpu().IsZero() && !req.Memory().IsZero() && !lim.Cpu().IsZero() && !lim.Memory().IsZero(), "%s: cpu and memory requests and limits", id)
		r.check(req.Cpu().Cmp(*lim.Cpu()) <= 0 && req.Memory().Cmp(*lim.Memory()) <= 0, "%s: requests within limits", id)
		if long {
			r.check(probeHits(c.ReadinessProbe, "/readyz"), "%s: readiness probe on /readyz", id)
			r.check(probeHits(c.LivenessProbe, "/healthz"), "%s: liveness probe on /healthz", id)
		}
		sc := c.SecurityContext
		r.check(sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem &&
			sc.Capabilities != nil && slices.Contains(sc.Capabilities.Drop, "ALL"), "%s: no privilege escalation, read-only root, all capabilities dropped", id)
		r.check(c.Image != "" && !strings.HasSuffix(c.Image, ":latest"), "%s: image %s", id, c.Image)
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil {
				_, ok := m.configMaps[ef.ConfigMapRef.Name]
				r.check(ok, "%s: ConfigMap %s exists", id, ef.ConfigMapRef.Name)
			}
			if ef.SecretRef != nil {
				m.refSecret(ef.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				m.refSecret(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			m.refSecret(v.Secret.SecretName)
		}
		if v.ConfigMap != nil {
			_, ok := m.configMaps[v.ConfigMap.Name]
			r.check(ok, "%s: ConfigMap volume %s exists", owner, v.ConfigMap.Name)
		}
	}
}
