package redact

import (
	"strings"
	"testing"
)

// Name/value lists (Kubernetes env, an ECS task's, a parameter store's
// {Name, Value}), Terraform's outputs, a secret that is JSON, every value
// of a Kubernetes Secret, assignments in strings (docker inspect's "Env")
// and a YAML stream's later documents give up their secrets; what is no
// secret is kept.
func TestHarvestNameValueLists(t *testing.T) {
	for name, c := range map[string]struct {
		text            string
		secrets, public []string
	}{
		"deploy.yaml": {"spec:\n  containers:\n    - name: shop\n      env:\n        - name: LOG_LEVEL\n          value: info-verbose\n        - name: DB_PASSWORD\n          value: K8sEnvPw-2240fa\n",
			[]string{"K8sEnvPw-2240fa"}, []string{"info-verbose"}},
		"inspect.json": {`[{"Config": {"Env": ["PATH=/usr/local/bin:/usr/bin", "STRIPE_API_KEY=DockInspKey-2241fb", "LANG=C.UTF-8"]}}]`,
			[]string{"DockInspKey-2241fb"}, []string{"/usr/local/bin:/usr/bin", "C.UTF-8"}},
		"params.json": {`{"Parameters": [{"Name": "/shop/db_password", "Value": "SsmPw-2243fd", "Type": "SecureString"}, {"Name": "/shop/region", "Value": "eu-west-1"}]}`,
			[]string{"SsmPw-2243fd"}, []string{"eu-west-1"}},
		"terraform.tfstate": {`{"version": 4, "outputs": {"db_password": {"value": "TfOut-2244fe", "type": "string", "sensitive": true}, "endpoint": {"value": "db.internal.example", "type": "string"}}}`,
			[]string{"TfOut-2244fe"}, []string{"db.internal.example"}},
		"secret.json": {`{"Name": "prod/shop", "SecretString": "{\"username\":\"shop-admin\",\"password\":\"AsmPw-2245ff\"}"}`,
			[]string{"AsmPw-2245ff"}, []string{"shop-admin"}},
		"k8s-secret.yaml": {"apiVersion: v1\nkind: Secret\nmetadata:\n  name: shop-secret\nstringData:\n  stripe: StripeRaw-2246aa\ndata:\n  webhook: V2ViaG9va1Jhdy0yMjQ3YWI=\n",
			[]string{"StripeRaw-2246aa", "WebhookRaw-2247ab"}, []string{"shop-secret"}},
		"multi.yaml": {"kind: ConfigMap\ndata:\n  region: eu-west-1\n---\nkind: Secret\nstringData:\n  signing_key: |-\n    MultiDocKey-2242fc\n",
			[]string{"MultiDocKey-2242fc"}, []string{"eu-west-1"}},
	} {
		s := NewSet()
		s.HarvestText(name, c.text)
		for _, v := range c.secrets {
			if got := s.String("<" + v + ">"); strings.Contains(got, v) {
				t.Errorf("%s: %q not hidden", name, v)
			}
		}
		for _, v := range c.public {
			if got := s.String("<" + v + ">"); !strings.Contains(got, v) {
				t.Errorf("%s: %q hidden", name, v)
			}
		}
	}
}
