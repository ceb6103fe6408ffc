// Package routeinfo owns the name server's route table: which broker groups
// exist in which cluster, the addresses of each group's master (id 0) and
// slaves, which topics each group serves with how many queues, and when each
// broker was last heard from.
//
// It follows RocketMQ's RouteInfoManager. Invariants, kept under one lock:
//
//   - a broker name is in clusterAddrs[c] iff its group exists and was last
//     registered in cluster c; an empty cluster is deleted;
//   - a group exists iff it has at least one address; when its last address
//     goes, the group and all its queue data go with it;
//   - topic queue data is written only from a master's registration, and
//     only when the master's DataVersion changed or the master is new;
//   - a topic with no queue data left is deleted.
//
// The table imports no network code and reads time only through
// Config.Now, so expiry is tested by moving a fake clock.
package routeinfo
