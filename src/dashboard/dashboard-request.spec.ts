import { ApiError, ErrorCode } from '../common/api-error';
import { DashboardError, notFoundAsPage } from './dashboard-request';

describe('notFoundAsPage', () => {
  it("turns the API's 404 into the dashboard's 404 page, passes the value and every other error through", async () => {
    await expect(notFoundAsPage(async () => 'shown')).resolves.toBe('shown');
    const missing = notFoundAsPage(() => Promise.reject(new ApiError(ErrorCode.NOT_FOUND, 404, 'Job not found')));
    await expect(missing).rejects.toBeInstanceOf(DashboardError);
    await expect(missing).rejects.toMatchObject({ status: 404, title: 'Not found' });
    const refused = new ApiError(ErrorCode.VALIDATION_FAILED, 400, 'bad');
    await expect(notFoundAsPage(() => Promise.reject(refused))).rejects.toBe(refused);
  });
});
