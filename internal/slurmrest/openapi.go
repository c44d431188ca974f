package slurmrest

import (
	_ "embed"
	"net/http"

	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// openapiSpec is /openapi/v3: slurmrestd 22.05's own specification
// (Apache 2.0, as its info says) as recorded (testdata/golden/
// rest_openapi_v3.txt), cut to the paths slurm-lite serves and the
// schemas they use. TestOpenAPISpec makes it from the recording
// (go test ./internal/slurmrest -run OpenAPI -update) and holds it to the
// route table.
//
//go:embed openapi.json
var openapiSpec string

func (s *server) openapi(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	doc(w, http.StatusOK, openapiSpec)
}
