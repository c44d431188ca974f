package api

import "time"

// Paths of the node's administration (scontrol update NodeName=...).
const (
	// PathNodeUpdate is POST NodeUpdate -> Drains: drain or resume the
	// node or some of its GPUs; root and operators only.
	PathNodeUpdate = "/v1/node/update"
	// PathNodeDrains is GET -> Drains: what is drained by hand or by the
	// health checks, with who and when.
	PathNodeDrains = "/v1/node/drains"
)

// Node update states (scontrol update State=...).
const (
	NodeDrain  = "DRAIN"
	NodeResume = "RESUME"
)

// NodeDrainUUID is the store's key for a drain of the whole node: a Drain
// row whose UUID is this word instead of a GPU's.
const NodeDrainUUID = "node"

// NodeUpdate is scontrol update NodeName=NAME [Gpu=ID,...] [State=S]
// [Reason=R]. Without GPUs it acts on the node; with GPUs (indices,
// UUIDs or PCI bus ids) on those GPUs alone. State is NodeDrain,
// NodeResume or "" (Reason alone: change the reason).
type NodeUpdate struct {
	Node   string   `json:"node"`
	GPUs   []string `json:"gpus,omitempty"`
	State  string   `json:"state,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// Drain is one drain: of the node (UUID NodeDrainUUID, Index -1) or of
// one GPU.
type Drain struct {
	UUID   string    `json:"uuid"`
	Index  int       `json:"index"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since,omitzero"`
	// By is the uid that drained it; the daemon's own for a drain the
	// health checks decided.
	By uint32 `json:"by"`
}

// Drains is what is drained now. Node is the drain of the whole node
// (nil when it is not drained); NodeReason a reason set on an undrained
// node (Slurm keeps and shows one). GPUs are drained GPUs, by index.
type Drains struct {
	Node       *Drain  `json:"node,omitempty"`
	NodeReason *Drain  `json:"node_reason,omitempty"`
	GPUs       []Drain `json:"gpus,omitempty"`
}
