// Runs before each test file (vitest.config.ts setupFiles).
import { afterAll } from 'vitest';
import { killStrays } from './helpers/children.js';

afterAll(killStrays);
