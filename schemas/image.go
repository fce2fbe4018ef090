package schemas

// ImageRef returns the reference a container engine stores a card image under
// (envgap-python-eval -> localhost/envgap-python-eval:latest). The images are built
// locally and tagged with the localhost/ prefix, because Podman's Docker-compatible API
// normalises bare names to docker.io/ otherwise. Building, running and checking an image
// all name it this way.
func ImageRef(name string) string { return "localhost/" + name + ":latest" }
