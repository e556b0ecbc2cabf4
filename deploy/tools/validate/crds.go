package main

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Custom resources of the monitoring component (Prometheus Operator, monitoring.coreos.com/v1) and
// of the Gateway API (gateway.networking.k8s.io/v1): decoded strictly against the fields we may use
// (as for KEDA: an unknown or misspelt field is an error), then cross-referenced with the Services.
// PromQL itself is checked by promtool (test/deploy/prometheus-rules.test.ts).

type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel          string               `json:"jobLabel,omitempty"`
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			Any        bool     `json:"any,omitempty"`
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []struct {
			Port          string              `json:"port"`
			Path          string              `json:"path,omitempty"`
			Scheme        string              `json:"scheme,omitempty"`
			Interval      string              `json:"interval,omitempty"`
			ScrapeTimeout string              `json:"scrapeTimeout,omitempty"`
			HonorLabels   bool                `json:"honorLabels,omitempty"`
			Params        map[string][]string `json:"params,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type PrometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []struct {
				Record      string            `json:"record,omitempty"`
				Alert       string            `json:"alert,omitempty"`
				Expr        string            `json:"expr"`
				For         string            `json:"for,omitempty"`
				Labels      map[string]string `json:"labels,omitempty"`
				Annotations map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type gatewayRef struct {
	Group       string `json:"group,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
	Port        *int32 `json:"port,omitempty"`
}

type HTTPRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ParentRefs []gatewayRef `json:"parentRefs"`
		Hostnames  []string     `json:"hostnames"`
		Rules      []struct {
			Name    string `json:"name,omitempty"`
			Matches []struct {
				Path *struct {
					Type  string `json:"type"`
					Value string `json:"value"`
				} `json:"path,omitempty"`
			} `json:"matches,omitempty"`
			BackendRefs []struct {
				gatewayRef `json:",inline"`
				Weight     *int32 `json:"weight,omitempty"`
			} `json:"backendRefs"`
			Timeouts *struct {
				Request        string `json:"request,omitempty"`
				BackendRequest string `json:"backendRequest,omitempty"`
			} `json:"timeouts,omitempty"`
		} `json:"rules"`
	} `json:"spec"`
}

type BackendTLSPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		TargetRefs []gatewayRef `json:"targetRefs"`
		Validation struct {
			CACertificateRefs       []gatewayRef `json:"caCertificateRefs,omitempty"`
			WellKnownCACertificates string       `json:"wellKnownCACertificates,omitempty"`
			Hostname                string       `json:"hostname"`
		} `json:"validation"`
	} `json:"spec"`
}

// crds holds the decoded custom resources of one manifest set.
type crds struct {
	serviceMonitors map[string]*ServiceMonitor
	rules           map[string]*PrometheusRule
	routes          map[string]*HTTPRoute
	backendTLS      map[string]*BackendTLSPolicy
}

func newCrds() crds {
	return crds{map[string]*ServiceMonitor{}, map[string]*PrometheusRule{}, map[string]*HTTPRoute{}, map[string]*BackendTLSPolicy{}}
}

// decodeCrd decodes one document of the API groups above; false when it is not valid.
func decodeCrd(r *report, m *manifests, apiVersion, kind string, doc []byte, id string) bool {
	var into any
	switch apiVersion + " " + kind {
	case "monitoring.coreos.com/v1 ServiceMonitor":
		o := &ServiceMonitor{}
		into, m.crds.serviceMonitors[idName(id)] = o, o
	case "monitoring.coreos.com/v1 PrometheusRule":
		o := &PrometheusRule{}
		into, m.crds.rules[idName(id)] = o, o
	case "gateway.networking.k8s.io/v1 HTTPRoute":
		o := &HTTPRoute{}
		into, m.crds.routes[idName(id)] = o, o
	case "gateway.networking.k8s.io/v1 BackendTLSPolicy":
		o := &BackendTLSPolicy{}
		into, m.crds.backendTLS[idName(id)] = o, o
	default:
		r.fail("%s: %s %s not checked here", id, apiVersion, kind)
		return false
	}
	if err := strictJSON(doc, into); err != nil {
		r.fail("%s: %v", id, err)
		return false
	}
	return true
}

func idName(id string) string { return id[strings.LastIndex(id, "/")+1:] }

// servicePort reports whether Service name has a port with that name (or number when name is empty).
func (m *manifests) servicePort(service, portName string, number int32) bool {
	s, ok := m.services[service]
	if !ok {
		return false
	}
	for _, p := range s.Spec.Ports {
		if (portName != "" && p.Name == portName) || (portName == "" && p.Port == number) {
			return true
		}
	}
	return false
}

func checkCrds(r *report, m *manifests) {
	for _, name := range sortedKeys(m.crds.serviceMonitors) {
		sm := m.crds.serviceMonitors[name]
		r.check(len(sm.Spec.Endpoints) > 0, "ServiceMonitor %s: endpoints", name)
		if ns := sm.Spec.NamespaceSelector; ns != nil && (ns.Any || len(ns.MatchNames) > 0) {
			r.note("ServiceMonitor %s: scrapes Services in %v (outside these manifests, not cross-checked)", name, ns.MatchNames)
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		matched := 0
		for _, sname := range sortedKeys(m.services) {
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(m.services[sname].Labels)) {
				matched++
				for _, ep := range sm.Spec.Endpoints {
					r.check(m.servicePort(sname, ep.Port, 0), "ServiceMonitor %s: Service %s has port %s", name, sname, ep.Port)
				}
			}
		}
		r.check(matched > 0, "ServiceMonitor %s: selects Services (%d)", name, matched)
	}
	for _, name := range sortedKeys(m.crds.rules) {
		count := 0
		for _, g := range m.crds.rules[name].Spec.Groups {
			for _, rule := range g.Rules {
				count++
				id := fmt.Sprintf("PrometheusRule %s group %s rule %s%s", name, g.Name, rule.Alert, rule.Record)
				r.check((rule.Alert == "") != (rule.Record == "") && strings.TrimSpace(rule.Expr) != "", "%s: alert or record, and expr", id)
				if rule.For != "" {
					_, err := time.ParseDuration(rule.For)
					r.check(err == nil, "%s: for %s is a duration", id, rule.For)
				}
				r.check(rule.Alert == "" || rule.Labels["severity"] != "", "%s: alert has a severity", id)
			}
		}
		r.check(count > 0, "PrometheusRule %s: has rules (%d)", name, count)
	}
	for _, name := range sortedKeys(m.crds.routes) {
		rt := m.crds.routes[name]
		r.check(len(rt.Spec.ParentRefs) > 0 && len(rt.Spec.Hostnames) > 0, "HTTPRoute %s: parentRefs and hostnames", name)
		for _, rule := range rt.Spec.Rules {
			for _, b := range rule.BackendRefs {
				ok := (b.Kind == "" || b.Kind == "Service") && b.Port != nil && m.servicePort(b.Name, "", *b.Port)
				r.check(ok, "HTTPRoute %s: backend Service %s port %v exists", name, b.Name, deref(b.Port))
			}
		}
	}
	for _, name := range sortedKeys(m.crds.backendTLS) {
		p := m.crds.backendTLS[name]
		for _, t := range p.Spec.TargetRefs {
			r.check(t.Kind == "Service" && m.servicePort(t.Name, t.SectionName, 0), "BackendTLSPolicy %s: Service %s port %s exists", name, t.Name, t.SectionName)
		}
		v := p.Spec.Validation
		r.check(v.Hostname != "" && (len(v.CACertificateRefs) > 0) != (v.WellKnownCACertificates != ""), "BackendTLSPolicy %s: hostname and one CA source", name)
		for _, ca := range v.CACertificateRefs {
			if ca.Kind == "Secret" {
				m.refSecret(ca.Name)
			}
		}
	}
}

func deref(p *int32) any {
	if p == nil {
		return "(none)"
	}
	return *p
}
