import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { EgressModule } from '../egress/egress.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { StorageModule } from '../storage/storage.module';
import { StorageDeliveryService } from './storage-delivery.service';
import { StorageDestination } from './storage-destination.entity';
import { StorageDestinationsController } from './storage-destinations.controller';
import { StorageDestinationsService } from './storage-destinations.service';

/** Storage destinations and the delivery of results to them (CONTRACT.md, "Storage destinations"). */
@Module({
  imports: [TypeOrmModule.forFeature([StorageDestination]), AuthModule, IdempotencyModule, EgressModule, StorageModule],
  controllers: [StorageDestinationsController],
  providers: [StorageDestinationsService, StorageDeliveryService],
  exports: [StorageDestinationsService, StorageDeliveryService],
})
export class StorageDestinationsModule {}
