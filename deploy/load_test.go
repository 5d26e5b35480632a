package deploy

// Loading and strict decoding of the manifests, and the typed shapes of the CRDs they use.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const (
	kubeDir   = "kubernetes" // the manifests, under deploy/
	namespace = "contentapi" // every namespaced object lives here
)

// kinds maps apiVersion/kind to the typed struct a document must decode into. A kind
// missing here is refused: add it deliberately, with its real type.
var kinds = map[string]func() metav1.ObjectMetaAccessor{
	"v1/Namespace":                            func() metav1.ObjectMetaAccessor { return &corev1.Namespace{} },
	"v1/ConfigMap":                            func() metav1.ObjectMetaAccessor { return &corev1.ConfigMap{} },
	"v1/Secret":                               func() metav1.ObjectMetaAccessor { return &corev1.Secret{} },
	"v1/Service":                              func() metav1.ObjectMetaAccessor { return &corev1.Service{} },
	"apps/v1/Deployment":                      func() metav1.ObjectMetaAccessor { return &appsv1.Deployment{} },
	"batch/v1/Job":                            func() metav1.ObjectMetaAccessor { return &batchv1.Job{} },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() metav1.ObjectMetaAccessor { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"policy/v1/PodDisruptionBudget":           func() metav1.ObjectMetaAccessor { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() metav1.ObjectMetaAccessor { return &networkingv1.NetworkPolicy{} },
	"keda.sh/v1alpha1/ScaledObject":           func() metav1.ObjectMetaAccessor { return &scaledObject{} },
	"keda.sh/v1alpha1/TriggerAuthentication":  func() metav1.ObjectMetaAccessor { return &triggerAuthentication{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() metav1.ObjectMetaAccessor { return &serviceMonitor{} },
	"monitoring.coreos.com/v1/PodMonitor":     func() metav1.ObjectMetaAccessor { return &podMonitor{} },
}

// clusterScoped kinds carry no namespace.
var clusterScoped = map[string]bool{"Namespace": true}

// CRDs (KEDA, Prometheus Operator) have no Go types here; these structs hold the fields of
// their published schemas that the manifests use, so a misspelt or misplaced field still
// fails strict decoding. Using a field not declared here fails too: add it (with the name
// the CRD documents) when a manifest needs it.

type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion             string `json:"apiVersion,omitempty"`
			Kind                   string `json:"kind,omitempty"`
			Name                   string `json:"name"`
			EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
		} `json:"scaleTargetRef"`
		PollingInterval       *int32 `json:"pollingInterval,omitempty"`
		InitialCooldownPeriod *int32 `json:"initialCooldownPeriod,omitempty"`
		CooldownPeriod        *int32 `json:"cooldownPeriod,omitempty"`
		IdleReplicaCount      *int32 `json:"idleReplicaCount,omitempty"`
		MinReplicaCount       *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount       *int32 `json:"maxReplicaCount,omitempty"`
		Advanced              *struct {
			RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
			HorizontalPodAutoscalerConfig *struct {
				Name     string                                         `json:"name,omitempty"`
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
			} `json:"horizontalPodAutoscalerConfig,omitempty"`
		} `json:"advanced,omitempty"`
		Fallback *struct {
			FailureThreshold int32 `json:"failureThreshold"`
			Replicas         int32 `json:"replicas"`
		} `json:"fallback,omitempty"`
		Triggers []kedaTrigger `json:"triggers"`
	} `json:"spec"`
}

type kedaTrigger struct {
	Type             string                         `json:"type"`
	Name             string                         `json:"name,omitempty"`
	UseCachedMetrics bool                           `json:"useCachedMetrics,omitempty"`
	MetricType       autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
	// KEDA's schema wants every metadata value as a string: an unquoted number fails here
	// as it would in the API server.
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
}

type kedaSecretRef struct {
	Parameter string `json:"parameter"`
	Name      string `json:"name"`
	Key       string `json:"key"`
}

type triggerAuthentication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretTargetRef    []kedaSecretRef `json:"secretTargetRef,omitempty"`
		ConfigMapTargetRef []kedaSecretRef `json:"configMapTargetRef,omitempty"`
		Env                []struct {
			Parameter     string `json:"parameter"`
			Name          string `json:"name"`
			ContainerName string `json:"containerName,omitempty"`
		} `json:"env,omitempty"`
	} `json:"spec"`
}

// KEDA's redis (lists) scaler: its trigger metadata and its TriggerAuthentication
// parameters (keda.sh/docs/scalers/redis-lists).
var (
	redisTriggerMetadata = []string{"address", "addressFromEnv", "host", "hostFromEnv", "port", "portFromEnv",
		"username", "usernameFromEnv", "passwordFromEnv", "listName", "listLength", "activationListLength",
		"enableTLS", "unsafeSsl", "databaseIndex"}
	redisAuthParameters = []string{"address", "host", "port", "username", "password", "tls", "ca", "cert", "key", "keyPassword"}
)

type secretKeySelector struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Optional *bool  `json:"optional,omitempty"`
}

type monitorEndpoint struct {
	Port          string `json:"port,omitempty"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
	Authorization *struct {
		Type        string             `json:"type,omitempty"`
		Credentials *secretKeySelector `json:"credentials,omitempty"`
	} `json:"authorization,omitempty"`
}

type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			Any        bool     `json:"any,omitempty"`
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []monitorEndpoint `json:"endpoints"`
	} `json:"spec"`
}

type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []monitorEndpoint    `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// object is one decoded document of a manifest file.
type object struct {
	File       string // path under deploy/kubernetes, slash-separated
	Doc        int    // 1-based position of the document in its file
	APIVersion string
	Kind       string
	Meta       metav1.Object
	Obj        any // pointer to the typed struct
}

func (o *object) String() string {
	return fmt.Sprintf("%s[%d] %s/%s", o.File, o.Doc, o.Kind, o.Meta.GetName())
}

// decodeStrict decodes JSON into v refusing unknown fields (case-sensitively, as the API
// server does) and duplicate fields.
func decodeStrict(data []byte, v any) error {
	strictErrs, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// splitDocuments splits multi-document YAML the way kubectl does.
func splitDocuments(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

// parseManifest decodes every document of one file into its typed struct.
func parseManifest(name string, data []byte) ([]*object, []error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", name, err)}
	}
	var objs []*object
	var errs []error
	for i, doc := range docs {
		where := fmt.Sprintf("%s[%d]", name, i+1)
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		if t := string(bytes.TrimSpace(js)); t == "null" || t == "" {
			continue // only comments
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(js, &tm); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		newObj, ok := kinds[tm.APIVersion+"/"+tm.Kind]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: apiVersion %q kind %q is not a kind these manifests may use", where, tm.APIVersion, tm.Kind))
			continue
		}
		obj := newObj()
		if err := decodeStrict(js, obj); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", where, tm.Kind, err))
			continue
		}
		o := &object{File: name, Doc: i + 1, APIVersion: tm.APIVersion, Kind: tm.Kind, Meta: obj.GetObjectMeta(), Obj: obj}
		errs = append(errs, checkMeta(o)...)
		objs = append(objs, o)
	}
	return objs, errs
}

// checkMeta applies the API server's rules for names, namespaces and labels.
func checkMeta(o *object) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{o}, a...)...))
	}
	if o.Meta.GetName() == "" {
		bad("no metadata.name")
	}
	for _, msg := range validation.IsDNS1123Subdomain(o.Meta.GetName()) {
		bad("name: %s", msg)
	}
	if clusterScoped[o.Kind] {
		if o.Meta.GetNamespace() != "" {
			bad("a %s has no namespace", o.Kind)
		}
	} else if o.Meta.GetNamespace() != namespace {
		bad("namespace %q, want %q", o.Meta.GetNamespace(), namespace)
	}
	for k, v := range o.Meta.GetLabels() {
		for _, msg := range validation.IsQualifiedName(k) {
			bad("label key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			bad("label %s value %q: %s", k, v, msg)
		}
	}
	return errs
}

// manifestSet is every object of every manifest file under deploy/kubernetes.
type manifestSet struct {
	objects []*object
	files   []string // every manifest file (not kustomization.yaml), slash-separated
	errs    []error
}

var (
	loadOnce sync.Once
	loaded   manifestSet
)

func loadAll() manifestSet {
	loadOnce.Do(func() {
		err := filepath.WalkDir(kubeDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			if d.Name() == "kustomization.yaml" || d.Name() == "kustomization.yml" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(p, kubeDir+string(filepath.Separator)))
			objs, errs := parseManifest(rel, data)
			if len(objs) == 0 && len(errs) == 0 {
				errs = append(errs, fmt.Errorf("%s: no object", rel))
			}
			loaded.files = append(loaded.files, rel)
			loaded.objects = append(loaded.objects, objs...)
			loaded.errs = append(loaded.errs, errs...)
			return nil
		})
		if err != nil {
			loaded.errs = append(loaded.errs, err)
		}
		sort.Strings(loaded.files)
	})
	return loaded
}

// manifests returns the decoded objects, stopping the test if any file does not decode
// (TestManifestsDecodeStrictly lists why).
func manifests(t *testing.T) manifestSet {
	t.Helper()
	m := loadAll()
	if len(m.errs) > 0 {
		t.Fatalf("the manifests do not decode (%d problems; see TestManifestsDecodeStrictly), first: %v", len(m.errs), m.errs[0])
	}
	return m
}

func (m manifestSet) ofKind(kind string) []*object {
	var out []*object
	for _, o := range m.objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func (m manifestSet) find(kind, name string) *object {
	for _, o := range m.objects {
		if o.Kind == kind && o.Meta.GetName() == name {
			return o
		}
	}
	return nil
}

func (m manifestSet) inFiles(files []string) manifestSet {
	var out manifestSet
	for _, o := range m.objects {
		if slices.Contains(files, o.File) {
			out.objects = append(out.objects, o)
		}
	}
	out.files = files
	return out
}

// workload is a pod template with where it comes from.
type workload struct {
	obj  *object
	pod  *corev1.PodTemplateSpec
	role string // the Dockerfile target its image must come from
}

func (m manifestSet) workloads() []workload {
	var out []workload
	for _, o := range m.objects {
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{obj: o, pod: &v.Spec.Template, role: roleOf(o.Meta.GetName())})
		case *batchv1.Job:
			out = append(out, workload{obj: o, pod: &v.Spec.Template, role: "ctl"})
		}
	}
	return out
}

// container is one container of a workload.
type container struct {
	corev1.Container
	obj  *object
	role string
}

func (c container) String() string { return fmt.Sprintf("%v container %s", c.obj, c.Name) }

// containers lists every container of every workload.
func (m manifestSet) containers() []container {
	var out []container
	for _, w := range m.workloads() {
		for _, c := range w.pod.Spec.Containers {
			out = append(out, container{Container: c, obj: w.obj, role: w.role})
		}
	}
	return out
}

// roleOf maps a Deployment name to the binary it runs: contentapi-api runs api.
func roleOf(name string) string {
	return strings.TrimPrefix(name, "contentapi-")
}

func (m manifestSet) deployment(name string) *appsv1.Deployment {
	if o := m.find("Deployment", name); o != nil {
		return o.Obj.(*appsv1.Deployment)
	}
	return nil
}

func (m manifestSet) secret(name string) *corev1.Secret {
	if o := m.find("Secret", name); o != nil {
		return o.Obj.(*corev1.Secret)
	}
	return nil
}

// secretValues is a Secret's stringData and data together.
func secretValues(s *corev1.Secret) map[string]string {
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out
}
