package namesrv

import (
	"fmt"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// What each request code the name server serves needs (package acl
// decides them, for plain ACL and ACL 2.0 alike). Every code
// registerHandlers serves has an entry (TestEveryHandlerIsMapped); a code
// without one needs an administrator.
//
// What changes the routes it hands out needs Update on the cluster the
// request names (every cluster when it names none: a broker's write
// permission): broker registration and unregistration, broker heartbeats,
// topic deletion, write-permission changes; a broker's data version query
// needs Get on its cluster. With plain ACL these are admin requests (Java's
// name server checks nothing: these are the codes it forgot); with ACL 2.0
// they need one of the name server's users, all super users: the
// administrator and the brokers' innerClientAuthenticationCredentials.
//
// Route queries are open: GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO,
// GET_ALL_TOPIC_LIST_FROM_NAMESERVER and GET_TOPICS_BY_CLUSTER need no
// resource, only what authentication the model asks: a signed account of
// plain_acl.yml (the file holds every account), none with ACL 2.0 (its
// users live in the brokers' stores, which the name server cannot see, so
// these codes are on its authentication white list).
func (s *Server) aclCodes() acl.Codes {
	open := func(dst []acl.Need, _ *protocol.Command, _ acl.Fields) ([]acl.Need, error) { return dst, nil }
	cluster := func(a acl.Action) acl.NeedsFunc {
		return func(dst []acl.Need, _ *protocol.Command, f acl.Fields) ([]acl.Need, error) {
			return append(dst, acl.ClusterNeed(f.View("clusterName"), a)), nil
		}
	}
	everyCluster := func(dst []acl.Need, _ *protocol.Command, _ acl.Fields) ([]acl.Need, error) {
		return append(dst, acl.ClusterNeed("", acl.Update)), nil
	}
	codes := acl.Codes{
		protocol.ReqRegisterBroker:        cluster(acl.Update),
		protocol.ReqUnregisterBroker:      cluster(acl.Update),
		protocol.ReqBrokerHeartbeat:       cluster(acl.Update),
		protocol.ReqDeleteTopicInNameSrv:  cluster(acl.Update),
		protocol.ReqQueryDataVersion:      cluster(acl.Get),
		protocol.ReqWipeWritePermOfBroker: everyCluster,
		protocol.ReqAddWritePermOfBroker:  everyCluster,
	}
	for _, code := range openCodes {
		codes[code] = open
	}
	return codes
}

// openCodes are the route queries: any client may send them.
var openCodes = []int16{protocol.ReqGetRouteInfoByTopic, protocol.ReqGetBrokerClusterInfo,
	protocol.ReqGetAllTopicListFromNameServer, protocol.ReqGetTopicsByCluster}

// guard is the name server's access control for cfg: plain ACL if ACLFile
// is set, ACL 2.0 if cfg.Auth enables it (its users kept in memory: the
// initial users and the inner credentials, super users all).
func (s *Server) guard(cfg Config) (acl.Guard, error) {
	var g acl.Guard
	if cfg.ACLFile != "" {
		c, err := acl.Open(acl.Options{File: cfg.ACLFile, Logger: s.log})
		if err != nil {
			return nil, fmt.Errorf("namesrv: %w", err)
		}
		s.acl = c
		g = append(g, c)
	}
	if cfg.Auth.AuthenticationEnabled || cfg.Auth.AuthorizationEnabled {
		acfg := cfg.Auth
		acfg.Logger = s.log
		acfg.AuthenticationWhitelist = append(append([]int16(nil), acfg.AuthenticationWhitelist...), openCodes...)
		m, err := auth.Open(acfg, auth.NewMemStore())
		if err != nil {
			if s.acl != nil {
				_ = s.acl.Close()
			}
			return nil, fmt.Errorf("namesrv: %w", err)
		}
		g = append(g, m)
	}
	return g, nil
}
