package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// applicationXids are the Xids an application causes on a healthy GPU
// (a bad kernel, a page fault): they say something about the job, not the
// card, and never drain it. The list is NVIDIA's own, from the k8s device
// plugin (internal/rm/health.go), which has ignored 109 too since it
// learned that a context-switch timeout comes from the workload.
// https://docs.nvidia.com/deploy/xid-errors/
var applicationXids = map[uint64]bool{
	13:  true, // Graphics Engine Exception
	31:  true, // GPU memory page fault
	43:  true, // GPU stopped processing
	45:  true, // Preemptive cleanup, due to previous errors
	68:  true, // Video processor exception
	109: true, // Context Switch Timeout Error
}

// ApplicationXid reports whether an Xid is caused by applications, and so
// never drains a GPU.
func ApplicationXid(xid uint64) bool { return applicationXids[xid] }

// xidText names the Xids an operator is most likely to meet, for drain
// reasons; others are just "Xid N".
var xidText = map[uint64]string{
	13:  "graphics engine exception",
	31:  "GPU memory page fault",
	43:  "GPU stopped processing",
	45:  "preemptive cleanup",
	48:  "double-bit ECC error",
	63:  "ECC page retirement or row remapping event",
	64:  "ECC page retirement or row remapping failure",
	68:  "video processor exception",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC error",
	95:  "uncontained ECC error",
	109: "context switch timeout",
	119: "GSP RPC timeout",
	120: "GSP error",
}

// xidLost are the Xids after which the GPU is gone: its jobs are dead.
var xidLost = map[uint64]bool{79: true}

func xidEvent(uuid string, xid uint64) XidEvent {
	text := fmt.Sprintf("Xid %d", xid)
	if t, ok := xidText[xid]; ok {
		text += ": " + t
	}
	return XidEvent{UUID: uuid, Xid: xid, Application: ApplicationXid(xid), Text: text}
}

// retText says what an NVML return code means, in the same words whether
// or not the real library is loaded (nvml.Return.Error asks the library
// when it is, and prints the constant's name when it is not).
func retText(r nvml.Return) string {
	switch r {
	case nvml.ERROR_GPU_IS_LOST:
		return "GPU is lost"
	case nvml.ERROR_UNKNOWN:
		return "unknown error"
	case nvml.ERROR_RESET_REQUIRED:
		return "GPU requires reset"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "driver/library version mismatch"
	case nvml.ERROR_UNINITIALIZED:
		return "NVML not initialized"
	case nvml.ERROR_TIMEOUT:
		return "timeout"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "driver not loaded"
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "library not found"
	case nvml.ERROR_NOT_SUPPORTED:
		return "not supported"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission"
	case nvml.ERROR_NOT_FOUND:
		return "not found"
	case nvml.ERROR_INVALID_ARGUMENT:
		return "invalid argument"
	case nvml.ERROR_INSUFFICIENT_POWER:
		return "insufficient power"
	case nvml.ERROR_IRQ_ISSUE:
		return "interrupt issue"
	case nvml.ERROR_CORRUPTED_INFOROM:
		return "corrupted inforom"
	case nvml.ERROR_MEMORY:
		return "memory error"
	}
	return r.Error()
}

// optional reports whether a failed call only means the GPU or driver does
// not offer the information: not a health problem.
func optional(r nvml.Return) bool {
	return r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_NO_PERMISSION
}
