import { Global, Module } from '@nestjs/common';
import { Clock, SystemClock } from './clock';

/** Cross-cutting providers: the {@link Clock} (overridden in tests). */
@Global()
@Module({
  providers: [{ provide: Clock, useClass: SystemClock }],
  exports: [Clock],
})
export class CommonModule {}
