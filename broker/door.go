package broker

// Door is one way into the broker: a server that adapts a protocol onto
// the core (broker/remotingdoor for RocketMQ remoting; a gRPC door; a
// test's own). The broker owns its doors' lifecycle; a door owns its
// listener, its connections and the goroutines serving them.
type Door interface {
	// Name names the door in logs ("remoting", "grpc").
	Name() string
	// Start listens and serves in the background.
	Start() error
	// Addr is the address the door listens on, "" before Start.
	Addr() string
	// StopAccepting refuses new connections; open ones are served on, so
	// held requests can still be answered while the core drains.
	StopAccepting()
	// Close closes every connection and waits for the door's goroutines.
	Close() error
}
