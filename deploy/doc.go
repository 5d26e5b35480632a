// Package deploy holds the deployment files of the service: the container build
// (Dockerfile), the Kubernetes manifests (kubernetes/) and the operator notes (README.md).
// Its tests check those files against the code: every manifest decodes strictly into its
// Kubernetes type, and the images, commands, ports, probes, variables and timeouts the
// manifests use are the ones the binaries really have.
package deploy
