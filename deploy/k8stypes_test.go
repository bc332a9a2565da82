package deploy

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// The subset of the Kubernetes API the manifests in k8s/ use. The manifests
// are decoded with KnownFields, so a misspelt or misplaced field (a
// readinessProbe one level too deep) fails the test instead of being
// ignored; a field the manifests start using is added here, spelt as in
// the API reference.

// object is what every Kubernetes object has.
type object struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   metadata `yaml:"metadata"`
}

type metadata struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type namespace struct {
	object `yaml:",inline"`
}

type secret struct {
	object     `yaml:",inline"`
	Type       string            `yaml:"type"`
	StringData map[string]string `yaml:"stringData"`
}

type configMap struct {
	object `yaml:",inline"`
	Data   map[string]string `yaml:"data"`
}

type deployment struct {
	object `yaml:",inline"`
	Spec   struct {
		Replicas             int           `yaml:"replicas"`
		RevisionHistoryLimit int           `yaml:"revisionHistoryLimit"`
		Selector             labelSelector `yaml:"selector"`
		Strategy             struct {
			Type          string `yaml:"type"`
			RollingUpdate struct {
				MaxSurge       intOrString `yaml:"maxSurge"`
				MaxUnavailable intOrString `yaml:"maxUnavailable"`
			} `yaml:"rollingUpdate"`
		} `yaml:"strategy"`
		Template struct {
			Metadata metadata `yaml:"metadata"`
			Spec     podSpec  `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type podSpec struct {
	TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               struct {
		RunAsNonRoot   bool  `yaml:"runAsNonRoot"`
		RunAsUser      int64 `yaml:"runAsUser"`
		RunAsGroup     int64 `yaml:"runAsGroup"`
		FSGroup        int64 `yaml:"fsGroup"`
		SeccompProfile struct {
			Type string `yaml:"type"`
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
	Volumes    []volume    `yaml:"volumes"`
}

type container struct {
	Name            string   `yaml:"name"`
	Image           string   `yaml:"image"`
	ImagePullPolicy string   `yaml:"imagePullPolicy"`
	Args            []string `yaml:"args"`
	Ports           []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
		Protocol      string `yaml:"protocol"`
	} `yaml:"ports"`
	Env []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	EnvFrom []struct {
		SecretRef struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	StartupProbe   *probe `yaml:"startupProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	Lifecycle      struct {
		PreStop struct {
			Sleep struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string      `yaml:"path"`
		Port intOrString `yaml:"port"`
	} `yaml:"httpGet"`
	InitialDelaySeconds int `yaml:"initialDelaySeconds"`
	PeriodSeconds       int `yaml:"periodSeconds"`
	TimeoutSeconds      int `yaml:"timeoutSeconds"`
	FailureThreshold    int `yaml:"failureThreshold"`
}

type volume struct {
	Name      string `yaml:"name"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
	EmptyDir *struct {
		SizeLimit string `yaml:"sizeLimit"`
	} `yaml:"emptyDir"`
}

type service struct {
	object `yaml:",inline"`
	Spec   struct {
		Type     string            `yaml:"type"`
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string      `yaml:"name"`
			Port       int         `yaml:"port"`
			TargetPort intOrString `yaml:"targetPort"`
			Protocol   string      `yaml:"protocol"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type hpa struct {
	object `yaml:",inline"`
	Spec   struct {
		ScaleTargetRef struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Name       string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas int `yaml:"minReplicas"`
		MaxReplicas int `yaml:"maxReplicas"`
		Metrics     []struct {
			Type     string `yaml:"type"`
			Resource struct {
				Name   string `yaml:"name"`
				Target struct {
					Type               string `yaml:"type"`
					AverageUtilization int    `yaml:"averageUtilization"`
				} `yaml:"target"`
			} `yaml:"resource"`
		} `yaml:"metrics"`
		Behavior struct {
			ScaleDown struct {
				StabilizationWindowSeconds int `yaml:"stabilizationWindowSeconds"`
				Policies                   []struct {
					Type          string `yaml:"type"`
					Value         int    `yaml:"value"`
					PeriodSeconds int    `yaml:"periodSeconds"`
				} `yaml:"policies"`
			} `yaml:"scaleDown"`
		} `yaml:"behavior"`
	} `yaml:"spec"`
}

type pdb struct {
	object `yaml:",inline"`
	Spec   struct {
		MinAvailable   *intOrString  `yaml:"minAvailable"`
		MaxUnavailable *intOrString  `yaml:"maxUnavailable"`
		Selector       labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

// intOrString is Kubernetes' IntOrString: a port number or name, a count
// or a percentage.
type intOrString struct {
	Int    int
	Str    string
	IsText bool
}

// UnmarshalYAML accepts an integer or a string scalar.
func (v *intOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want an integer or a string", n.Line)
	}
	if n.ShortTag() == "!!int" {
		i, err := strconv.Atoi(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		*v = intOrString{Int: i}
		return nil
	}
	*v = intOrString{Str: n.Value, IsText: true}
	return nil
}

func (v intOrString) String() string {
	if v.IsText {
		return v.Str
	}
	return strconv.Itoa(v.Int)
}
