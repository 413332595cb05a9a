import { runIngestBench } from './ingest.js';
import { stopBenchServer } from './support.js';
console.log(JSON.stringify(await runIngestBench({ quick: process.argv.includes('--quick') }), null, 2));
await stopBenchServer();
