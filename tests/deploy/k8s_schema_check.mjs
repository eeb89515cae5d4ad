// Validates Kubernetes manifests with the OpenAPI schemas compiled into kubernetes-models.
// Usage: node k8s_schema_check.mjs FILE.yaml...   (run from a folder holding node_modules)
// Every document must be a kind the schemas know, except kustomize's own Kustomization.
import fs from 'node:fs';
import yaml from 'js-yaml';

let failures = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of yaml.loadAll(fs.readFileSync(file, 'utf8'))) {
    if (!doc) continue;
    const where = `${file}: ${doc.kind} ${doc.metadata?.name ?? ''}`;
    if (String(doc.apiVersion).startsWith('kustomize.config.k8s.io/')) {
      console.log(`skip  ${where} (kustomize configuration, not an API object)`);
      continue;
    }
    let Model;
    try {
      // "apps/v1" -> kubernetes-models/apps/v1/Deployment, "v1" -> kubernetes-models/v1/Service
      Model = (await import(`kubernetes-models/${doc.apiVersion}/${doc.kind}`))[doc.kind];
    } catch (e) {
      console.log(`FAIL  ${where}: unknown apiVersion/kind ${doc.apiVersion} ${doc.kind}`);
      failures++;
      continue;
    }
    try {
      new Model(doc).validate();
      console.log(`ok    ${where}`);
      checked++;
    } catch (e) {
      console.log(`FAIL  ${where}: ${e.message}`);
      failures++;
    }
  }
}
if (checked === 0 && failures === 0) {
  console.log('FAIL  no Kubernetes objects found');
  process.exit(1);
}
process.exit(failures ? 1 : 0);
