// Bundles the real-VS Code tests (scripts/test-vscode-real): the test module for code-server's
// extension host (vscode external) and the driver (playwright-core external, from node_modules).
import * as esbuild from "esbuild";

const common = { bundle: true, format: "cjs", platform: "node", target: "node20", logLevel: "warning" };
await esbuild.build({ ...common, entryPoints: ["test-real/suite.ts"], outfile: "out/test-real/suite.js", external: ["vscode"] });
await esbuild.build({ ...common, entryPoints: ["test-real/driver.ts"], outfile: "out/test-real/driver.js", external: ["playwright-core"] });
