//go:build tools

// Package tools pins modules the tests and tooling depend on.
package tools

import (
	_ "github.com/apache/rocketmq-client-go/v2"
	_ "github.com/cloudwego/netpoll"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
)
