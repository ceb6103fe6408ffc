package broker

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// ApplyProperties reads a RocketMQ broker.conf (Java properties:
// key=value or key: value lines, # and ! comments, as
// protocol.ScanProperties reads them) and sets the fields whose keys mean
// the same here, line by line, a later line of a key winning:
//
//	namesrvAddr            NamesrvAddrs (";"-separated)
//	listenPort             ListenAddr's port (":<port>", host kept if set)
//	brokerIP1              AdvertiseAddr's host (with the listen port)
//	brokerName             BrokerName
//	brokerClusterName      ClusterName
//	brokerId               BrokerID
//	storePathRootDir       StoreDir
//	flushDiskType          FlushMode (ASYNC_FLUSH or SYNC_FLUSH)
//	autoCreateTopicEnable  AutoCreateTopicEnable
//	fileReservedTime       FileReservedTime (hours)
//	defaultTopicQueueNums  DefaultTopicQueueNums
//	maxMessageSize         MaxMessageSize (bytes)
//	brokerPermission       BrokerPermission (RocketMQ perm bits: 6, 4, 2)
//	messageDelayLevel      MessageDelayLevel ("1s 5s ... 2h")
//	timerMaxDelaySec       TimerMaxDelay (seconds)
//	rocketmq.broker.rebalance.lockMaxLiveTime  LockMaxLiveTime (ms)
//	transactionTimeOut        TransactionTimeout (ms)
//	transactionCheckMax       TransactionCheckMax
//	transactionCheckInterval  TransactionCheckInterval (ms)
//	diskMaxUsedSpaceRatio, diskSpaceCleanForciblyRatio, diskSpaceWarningLevelRatio
//	                          the Disk*Ratio fields (percent)
//	enablePropertyFilter      EnablePropertyFilter
//	filterSupportRetry        FilterSupportRetry
//	metricsExporterType, metricsPromExporterHost, metricsPromExporterPort,
//	metricsTopicLimit, metricsGroupLimit  Metrics (metrics.Config.ApplyKey)
//	aclEnable                 ACLEnable
//	rocketmq.acl.plain.file   ACLFile (Java's system property)
//	accessKey, secretKey      Credentials
//	authenticationEnabled, authorizationEnabled, initAuthenticationUser,
//	innerClientAuthenticationCredentials, ...  Auth (auth.Config.ApplyKey)
//	enableDLegerCommitLog, dLegerGroup, dLegerPeers, dLegerSelfId
//	                          Replication (DLedger's keys)
//	raftHeartbeatTimeoutMs, raftElectionTimeoutMs
//	                          Replication's timeouts (Runnel's keys, ms)
//	slaveReadEnable           SlaveReadEnable
//	tls.server.mode, tls.server.certPath, tls.server.keyPath, tlsEnable, ...
//	                          TLS (remoting.TLSConfig.Set lists them)
//
// It returns the keys it does not know, which callers report and ignore
// (RocketMQ has hundreds). A malformed value is an error naming its line.
func (c *Config) ApplyProperties(r io.Reader) (ignored []string, err error) {
	var ip1, port string
	err = protocol.ScanProperties(r, func(n int, key, val string) error {
		bad := func(err error) error {
			return fmt.Errorf("%w: line %d: %s=%q: %v", ErrBadConfig, n, key, val, err)
		}
		switch key {
		case "namesrvAddr":
			c.NamesrvAddrs = splitAddrs(val)
		case "listenPort":
			if _, err := strconv.ParseUint(val, 10, 16); err != nil {
				return bad(err)
			}
			port = val
		case "brokerIP1":
			ip1 = val
		case "brokerName":
			c.BrokerName = val
		case "brokerClusterName":
			c.ClusterName = val
		case "brokerId":
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return bad(err)
			}
			c.BrokerID = v
		case "storePathRootDir":
			c.StoreDir = val
		case "flushDiskType":
			m, err := store.ParseFlushMode(val)
			if err != nil {
				return bad(err)
			}
			c.FlushMode = m
		case "rocketmq.acl.plain.file":
			c.ACLFile = val
		case "accessKey":
			c.Credentials.AccessKey = val
		case "secretKey":
			c.Credentials.SecretKey = val
		case "dLegerGroup":
			c.Replication.Group = val
		case "dLegerSelfId":
			c.Replication.SelfID = val
		case "dLegerPeers":
			peers, err := ParsePeers(val)
			if err != nil {
				return bad(err)
			}
			c.Replication.Peers = peers
		case "raftHeartbeatTimeoutMs", "raftElectionTimeoutMs":
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil || v <= 0 {
				return bad(fmt.Errorf("not a positive number of milliseconds"))
			}
			if key == "raftHeartbeatTimeoutMs" {
				c.Replication.HeartbeatTimeout = time.Duration(v) * time.Millisecond
			} else {
				c.Replication.ElectionTimeout = time.Duration(v) * time.Millisecond
			}
		case "enableDLegerCommitLog", "slaveReadEnable":
			v, err := strconv.ParseBool(val)
			if err != nil {
				return bad(err)
			}
			if key == "slaveReadEnable" {
				c.SlaveReadEnable = v
			} else {
				c.Replication.Enable = v
			}
		case "autoCreateTopicEnable", "enablePropertyFilter", "filterSupportRetry", "aclEnable":
			v, err := strconv.ParseBool(val)
			if err != nil {
				return bad(err)
			}
			switch key {
			case "autoCreateTopicEnable":
				c.AutoCreateTopicEnable = v
			case "enablePropertyFilter":
				c.EnablePropertyFilter = v
			case "aclEnable":
				c.ACLEnable = v
			default:
				c.FilterSupportRetry = v
			}
		case "fileReservedTime":
			v, err := strconv.Atoi(val)
			if err != nil {
				return bad(err)
			}
			c.FileReservedTime = time.Duration(v) * time.Hour
		case "defaultTopicQueueNums":
			v, err := strconv.Atoi(val)
			if err != nil {
				return bad(err)
			}
			c.DefaultTopicQueueNums = v
		case "maxMessageSize":
			v, err := strconv.Atoi(val)
			if err != nil {
				return bad(err)
			}
			c.MaxMessageSize = v
		case "brokerPermission":
			v, err := strconv.Atoi(val)
			if err != nil || v <= 0 || v > 7 {
				return bad(fmt.Errorf("not RocketMQ perm bits (6 read and write, 4 read, 2 write)"))
			}
			c.BrokerPermission = v
		case "messageDelayLevel":
			if err := validDelayLevels(val); err != nil {
				return bad(err)
			}
			c.MessageDelayLevel = val
		case "timerMaxDelaySec":
			v, err := strconv.ParseInt(val, 10, 32)
			if err != nil || v <= 0 {
				return bad(fmt.Errorf("not a positive number of seconds"))
			}
			c.TimerMaxDelay = time.Duration(v) * time.Second
		case "rocketmq.broker.rebalance.lockMaxLiveTime":
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil || v <= 0 {
				return bad(fmt.Errorf("not a positive number of milliseconds"))
			}
			c.LockMaxLiveTime = time.Duration(v) * time.Millisecond
		case "transactionTimeOut", "transactionCheckInterval":
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil || v <= 0 {
				return bad(fmt.Errorf("not a positive number of milliseconds"))
			}
			if key == "transactionTimeOut" {
				c.TransactionTimeout = time.Duration(v) * time.Millisecond
			} else {
				c.TransactionCheckInterval = time.Duration(v) * time.Millisecond
			}
		case "diskMaxUsedSpaceRatio", "diskSpaceCleanForciblyRatio", "diskSpaceWarningLevelRatio":
			v, err := strconv.Atoi(val)
			if err != nil || v < 10 || v > 95 {
				return bad(fmt.Errorf("not a percentage from 10 to 95"))
			}
			switch key {
			case "diskMaxUsedSpaceRatio":
				c.DiskMaxUsedSpaceRatio = v
			case "diskSpaceCleanForciblyRatio":
				c.DiskSpaceCleanForciblyRatio = v
			default:
				c.DiskSpaceWarningLevelRatio = v
			}
		case "transactionCheckMax":
			v, err := strconv.Atoi(val)
			if err != nil || v <= 0 {
				return bad(fmt.Errorf("not a positive number"))
			}
			c.TransactionCheckMax = v
		default:
			if ok, err := c.Metrics.ApplyKey(key, val); ok {
				if err != nil {
					return bad(err)
				}
				return nil
			}
			if ok, err := c.Auth.ApplyKey(key, val); ok {
				if err != nil {
					return bad(err)
				}
				return nil
			}
			if known, err := c.TLS.Set(key, val); err != nil {
				return bad(err)
			} else if !known {
				ignored = append(ignored, key)
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, protocol.ErrPropertiesSyntax):
		return ignored, fmt.Errorf("%w: %w", ErrBadConfig, err)
	case err != nil && !errors.Is(err, ErrBadConfig):
		return ignored, fmt.Errorf("broker: read properties: %w", err)
	case err != nil:
		return ignored, err
	}
	if port != "" {
		host, _, err := net.SplitHostPort(c.ListenAddr)
		if err != nil {
			host = ""
		}
		c.ListenAddr = net.JoinHostPort(host, port)
	}
	if ip1 != "" {
		p := port
		if p == "" {
			if _, lp, err := net.SplitHostPort(c.ListenAddr); err == nil {
				p = lp
			}
		}
		c.AdvertiseAddr = net.JoinHostPort(ip1, p)
	}
	return ignored, nil
}

// splitAddrs splits RocketMQ's ";"-separated name server list (commas
// are accepted too), dropping blanks.
func splitAddrs(s string) []string {
	var out []string
	for _, a := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' }) {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// SplitNamesrvAddrs parses a name server list as NAMESRV_ADDR and
// namesrvAddr give it ("a:9876;b:9876").
func SplitNamesrvAddrs(s string) []string { return splitAddrs(s) }
