// Package deploy holds the files that run modelgate as several replicas
// sharing one PostgreSQL database and one Redis behind a load balancer: a
// Dockerfile, a docker-compose.yml with an nginx load balancer, and
// Kubernetes manifests under k8s/ (docs/deployment.md is the guide).
//
// It has no code. Its tests parse every file, check each Kubernetes object
// against the subset of the API the manifests use, cross-check the files
// against each other and against the gateway's own configuration loader
// (ports, probes, selectors, journal folders, drain times), and run
// `docker compose config`, kubectl and kubeconform when they are installed.
// Nothing here starts a container or talks to a cluster.
package deploy
