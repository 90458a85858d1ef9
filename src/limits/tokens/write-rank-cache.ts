/**
 * `npm run build`'s last step: writes the binary rank tables beside the compiled code
 * (rank-cache.ts), so that a gateway reads them in about a millisecond instead of decoding
 * js-tiktoken's text at boot. Without them it still works, just slower to start.
 */
import { writeRankCaches } from './rank-source';

for (const file of writeRankCaches()) {
  process.stdout.write(`rank table: ${file}\n`);
}
