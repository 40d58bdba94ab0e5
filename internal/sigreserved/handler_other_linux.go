//go:build linux && !amd64 && !arm64

package sigreserved

// reservedAction is the action of a reserved signal where no handler is
// built in: ignored, and so ignored in children too.
func reservedAction() kernelSigaction {
	return kernelSigaction{handler: sigIGN}
}
