import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * A Redis connection of its own for the readiness check: no offline queue and no retries per
 * command, so a `PING` while Redis is away fails at once instead of waiting for a reconnection
 * (the queues' own connections would wait). Reconnects in the background every second.
 */
@Injectable()
export class RedisProbe implements OnModuleDestroy {
  private readonly client: Redis;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      retryStrategy: () => 1000,
    });
    // Errors surface through ping(); without a listener ioredis would log each reconnection failure.
    this.client.on('error', () => undefined);
    this.client.connect().catch(() => undefined);
  }

  /** Resolves when Redis answers `PING`; rejects with the connection error otherwise. */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  onModuleDestroy(): void {
    this.client.disconnect();
  }
}
