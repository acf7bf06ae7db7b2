import { Global, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Clock, SystemClock } from './clock';
import { SecretCipher } from './secret-cipher';

/**
 * Cross-cutting providers: the {@link Clock} (overridden in tests), and the {@link SecretCipher} built
 * from `WEBHOOK_SECRET_KEY(S)` that seals webhook signing secrets and stored `Idempotency-Key` answers.
 */
@Global()
@Module({
  providers: [
    { provide: Clock, useClass: SystemClock },
    {
      provide: SecretCipher,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (!config.webhookSecretKeys.length) {
          new Logger('WebhooksModule').warn('WEBHOOK_SECRET_KEY is unset: webhook signing secrets are stored unencrypted');
        }
        return new SecretCipher(config.webhookSecretKeys);
      },
    },
  ],
  exports: [Clock, SecretCipher],
})
export class CommonModule {}
