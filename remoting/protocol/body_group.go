package protocol

import "github.com/runnelmq/runnel/groupconf"

// SubscriptionGroupConfig is a consumer group's configuration, the body of
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and an entry of
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG's subscriptionGroupTable: the one group
// config type, groupconf.Config, under its wire name. Decode it over
// groupconf.New, so absent fields keep Java's defaults.
type SubscriptionGroupConfig = groupconf.Config

// SubscriptionGroupWrapper is GET_ALL_SUBSCRIPTIONGROUP_CONFIG's body
// (Java SubscriptionGroupWrapper, without its forbidden table).
type SubscriptionGroupWrapper struct {
	SubscriptionGroupTable map[string]SubscriptionGroupConfig `json:"subscriptionGroupTable"`
	DataVersion            DataVersion                        `json:"dataVersion"`
}

// Connection is one client connected in a group (Java Connection), an
// entry of the connectionSet of GET_PRODUCER_CONNECTION_LIST's and
// GET_CONSUMER_CONNECTION_LIST's bodies.
type Connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int    `json:"version"`
	// Protocol is Runnel's addition: how the client speaks to the broker,
	// "remoting" or "grpc_v2" (RocketMQ 5's protocol_type names). Java's
	// tools ignore a field they do not know; a Java broker leaves it out.
	Protocol string `json:"protocol,omitempty"`
}
