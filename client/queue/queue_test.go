package queue

import (
	"slices"
	"testing"
)

// TestSortOrder: the canonical order is numeric in the queue id (protocol's
// CompareQueues; its Java form and order tests live there), and Sorted
// leaves its input alone.
func TestSortOrder(t *testing.T) {
	in := []MessageQueue{
		{Topic: "b", BrokerName: "x", QueueID: 0},
		{Topic: "a", BrokerName: "y", QueueID: 1},
		{Topic: "a", BrokerName: "x", QueueID: 10},
		{Topic: "a", BrokerName: "x", QueueID: 2},
		{Topic: "a", BrokerName: "y", QueueID: 0},
	}
	want := []MessageQueue{
		{Topic: "a", BrokerName: "x", QueueID: 2},
		{Topic: "a", BrokerName: "x", QueueID: 10}, // numeric, not lexical, queue id order
		{Topic: "a", BrokerName: "y", QueueID: 0},
		{Topic: "a", BrokerName: "y", QueueID: 1},
		{Topic: "b", BrokerName: "x", QueueID: 0},
	}
	got := Sorted(in)
	if !slices.Equal(got, want) {
		t.Fatalf("Sorted = %v, want %v", got, want)
	}
	if in[0] != (MessageQueue{Topic: "b", BrokerName: "x", QueueID: 0}) {
		t.Fatalf("Sorted modified its input: %v", in)
	}
}

func TestIsRetryTopic(t *testing.T) {
	if !IsRetryTopic("%RETRY%group") || IsRetryTopic("group") || IsRetryTopic("%DLQ%group") {
		t.Fatal("IsRetryTopic misclassifies")
	}
}
