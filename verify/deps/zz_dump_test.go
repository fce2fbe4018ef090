package deps
import ("testing";"os";"fmt";"encoding/json";"github.com/envgap/envgap/schemas")
func TestZZDump(t *testing.T){
 for _, c := range []struct{d string; e schemas.Ecosystem}{{"py_reqs","python"},{"py_setup_static","python"},{"py_setup_runtime","python"},{"py_setup_readfile","python"},{"py_setup_kwargs","python"},{"py_pyproject","python"},{"py_poetry","python"},{"py_setupcfg","python"},{"py_none","python"},{"js_basic","javascript"},{"java_multi","java"},{"cpp_tricky","cpp"}} {
  d, err := ParseManifests(c.e, os.DirFS("testdata/d1/"+c.d))
  b,_ := json.MarshalIndent(d, "", " ")
  fmt.Println("==", c.d, err, string(b))
 }
}
